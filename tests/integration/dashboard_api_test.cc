// The dashboard's HTTP API (docs/dashboard.md) on a real qkov-server with
// tokens, after a real worker trained a small sweep: statuses and JSON
// errors, login cookies, the static root, and replies that equal SQL over
// the server's database.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <csignal>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/task_info.h"
#include "common/task_kind.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

using nlohmann::json;

constexpr char kSweep[] = R"(name: dash
axes: {parameterization: [FAFO, CACO], lr_ratio: [1, 20], eta_ov: [0.1], seed: [1, 2]}
training: {max_steps: 300, report_every: 50, evaluation: {num_examples: 128}}
)";
constexpr char kReader[] = "reader-token-0123456789";
constexpr char kWorker[] = "worker-token-0123456789";

class DashboardApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    WriteFile(dir_->File("tokens"),
              absl::StrCat("worker ", kWorker, "\nuser user-token-0123456789ab",
                           " alice\nread-only ", kReader, "\n"));
    WriteFile(dir_->File("user.token"), "user-token-0123456789ab\n");
    WriteFile(dir_->File("worker.token"), absl::StrCat(kWorker, "\n"));
    WriteFile(dir_->File("sweep.yaml"), kSweep);
    server_ = new ServerUnderTest(
        *dir_,
        {"--token_file=" + dir_->File("tokens"), "--http_listen=127.0.0.1:0",
         "--http_port_file=" + dir_->File("http.port")});
    ASSERT_TRUE(WaitUntil(
        [] { return !ReadFile(dir_->File("http.port")).empty(); }, 30));
    http_port_ = std::stoi(ReadFile(dir_->File("http.port")));
    CommandResult r = Qkov({"submit", dir_->File("sweep.yaml")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Process w(
        {QKOV_WORKER_BIN, "--server=" + server_->address(),
         "--token_file=" + dir_->File("worker.token"), "--exit_when_idle"},
        dir_->File("worker.log"));
    ASSERT_EQ(w.Wait(120), 0) << ReadFile(dir_->File("worker.log"));
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }

  static CommandResult Qkov(std::vector<std::string> args) {
    std::vector<std::string> argv = {
        QKOV_CLI_BIN, "--server=" + server_->address(),
        "--token_file=" + dir_->File("user.token")};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }

  // GET with the reader's token (or `token`, "" for none).
  static httplib::Result Get(const std::string& path,
                             const std::string& token = kReader,
                             httplib::Headers headers = {}) {
    httplib::Client c("127.0.0.1", http_port_);
    c.set_read_timeout(30, 0);
    if (!token.empty())
      headers.emplace("Authorization", absl::StrCat("Bearer ", token));
    return c.Get(path, headers);
  }
  static json GetJson(const std::string& path) {
    httplib::Result r = Get(path);
    EXPECT_TRUE(r) << path;
    if (!r) return json();
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    return json::parse(r->body);
  }
  // The error body's status name, checking its shape.
  static std::string ErrorOf(const httplib::Result& r, int http) {
    EXPECT_TRUE(r);
    if (!r) return "";
    EXPECT_EQ(r->status, http) << r->body;
    json body = json::parse(r->body, nullptr, false);
    EXPECT_TRUE(body.contains("error")) << r->body;
    if (!body.contains("error")) return "";
    EXPECT_EQ(body["error"]["code"], http);
    return body["error"]["status"].get<std::string>() + ": " +
           body["error"]["message"].get<std::string>();
  }

  static TempDir* dir_;
  static ServerUnderTest* server_;
  static int http_port_;
};
TempDir* DashboardApiTest::dir_ = nullptr;
ServerUnderTest* DashboardApiTest::server_ = nullptr;
int DashboardApiTest::http_port_ = 0;

TEST_F(DashboardApiTest, TokensRolesAndTheSessionCookie) {
  EXPECT_EQ(ErrorOf(Get("/api/v1/sweeps", ""), 401),
            "UNAUTHENTICATED: dashboard: log in at /login or send "
            "'Authorization: Bearer TOKEN'");
  EXPECT_EQ(ErrorOf(Get("/api/v1/sweeps", "not-a-known-token-00000"), 401),
            "UNAUTHENTICATED: dashboard: unknown token");
  EXPECT_EQ(ErrorOf(Get("/api/v1/sweeps", kWorker), 403),
            "PERMISSION_DENIED: dashboard: role worker may not read this");
  EXPECT_EQ(
      ErrorOf(Get("/api/v1/sweeps", "", {{"Authorization", "Basic x"}}), 401),
      "UNAUTHENTICATED: dashboard: Authorization header is not 'Bearer "
      "TOKEN'");
  EXPECT_EQ(Get("/api/v1/sweeps")->status, 200);
  // The pages and their files load without a token; their data does not.
  EXPECT_EQ(Get("/", "")->status, 200);
  EXPECT_EQ(Get("/static/app.js", "")->status, 200);
  EXPECT_EQ(Get("/static/chart.min.js", "")->status, 200);

  httplib::Client c("127.0.0.1", http_port_);
  // The browser's Origin on a POST from the dashboard's own page.
  const httplib::Headers origin = {
      {"Origin", absl::StrCat("http://127.0.0.1:", http_port_)}};
  // A worker's token is refused at the form too, and says why.
  httplib::Result bad =
      c.Post("/login", origin, httplib::Params{{"token", kWorker}});
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 303) << bad->body;
  EXPECT_EQ(bad->get_header_value("Location"), "/login?failed=role");
  EXPECT_FALSE(bad->has_header("Set-Cookie"));
  httplib::Result login =
      c.Post("/login", origin, httplib::Params{{"token", kReader}});
  ASSERT_TRUE(login);
  EXPECT_EQ(login->status, 303);
  const std::string cookie = login->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos) << cookie;
  EXPECT_EQ(cookie.find(kReader), std::string::npos)
      << "the cookie must not carry the token itself";
  const std::string session = cookie.substr(0, cookie.find(';'));
  ASSERT_EQ(session.rfind("qkov_session=", 0), 0u) << cookie;
  EXPECT_EQ(Get("/api/v1/sweeps", "", {{"Cookie", session}})->status, 200);
  EXPECT_EQ(
      Get("/api/v1/sweeps", "", {{"Cookie", "qkov_session=0123"}})->status,
      401);
  // Logging out ends the session on the server, not only in the browser.
  httplib::Result out =
      c.Post("/logout", httplib::Headers{{"Cookie", session}, *origin.begin()},
             "", "application/x-www-form-urlencoded");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, 303);
  EXPECT_EQ(Get("/api/v1/sweeps", "", {{"Cookie", session}})->status, 401);
}

TEST_F(DashboardApiTest, BadRequestsGetStatusesAndJsonErrors) {
  EXPECT_EQ(ErrorOf(Get("/api/v1/sweeps/nope"), 404),
            "NOT_FOUND: no sweep named 'nope'");
  EXPECT_EQ(ErrorOf(Get("/api/v1/sweeps/nope/results"), 404).substr(0, 10),
            "NOT_FOUND:");
  EXPECT_EQ(ErrorOf(Get("/api/v1/trials/nope-00000000"), 404).substr(0, 10),
            "NOT_FOUND:");
  EXPECT_EQ(ErrorOf(Get("/api/v1/nothing"), 404),
            "NOT_FOUND: no such page: /api/v1/nothing");
  EXPECT_EQ(ErrorOf(Get("/api/v1/sweeps/dash/results?limit=abc"), 400),
            "INVALID_ARGUMENT: limit: 'abc' is not an integer in [1, 1000]");
  EXPECT_EQ(ErrorOf(Get("/api/v1/sweeps/dash/results?limit=100000"), 400)
                .substr(0, 24),
            "INVALID_ARGUMENT: limit:");
  EXPECT_EQ(ErrorOf(Get("/api/v1/sweeps/dash/results?sort=a%20b"), 400),
            "INVALID_ARGUMENT: sort_by: 'a b' is not an axis, state, trial or "
            "metric name");
  EXPECT_EQ(ErrorOf(Get("/api/v1/sweeps/dash/results?where=seed"), 400),
            "INVALID_ARGUMENT: where seed: expected key=value");
  EXPECT_EQ(
      ErrorOf(Get("/api/v1/sweeps/dash/aggregate?by=colour&metric=ac"), 400),
      "INVALID_ARGUMENT: by: unknown key 'colour' (parameterization, "
      "lr_ratio, eta_ov, seed, alpha, arm, state, trial)");
  EXPECT_EQ(ErrorOf(Get("/api/v1/sweeps/dash/aggregate?by=seed"), 400),
            "INVALID_ARGUMENT: metrics: name at least one");
  // A hostile string comes back escaped, never as raw control bytes.
  const std::string hostile =
      ErrorOf(Get("/api/v1/sweeps/dash/results?sort=%1b%5b2J"), 400);
  EXPECT_EQ(hostile.find('\x1b'), std::string::npos);
  EXPECT_NE(hostile.find("\\x1b[2J"), std::string::npos) << hostile;

  httplib::Client c("127.0.0.1", http_port_);
  httplib::Result post = c.Post(
      "/api/v1/sweeps",
      httplib::Headers{{"Authorization", absl::StrCat("Bearer ", kReader)}},
      "{}", "application/json");
  EXPECT_EQ(ErrorOf(post, 405),
            "UNIMPLEMENTED: dashboard: POST is not allowed; the dashboard is "
            "read-only");
}

TEST_F(DashboardApiTest, MatchedViewNamesEachBadRequest) {
  const std::string base = "/api/v1/sweeps/dash/matched?";
  EXPECT_EQ(ErrorOf(Get(base + "metric=distinct_attention"), 400),
            "INVALID_ARGUMENT: matched: curve (the reference curve, e.g. "
            "train_loss) is required");
  EXPECT_EQ(ErrorOf(Get(base + "curve=train_loss"), 400),
            "INVALID_ARGUMENT: matched: at least one metric is required");
  EXPECT_EQ(
      ErrorOf(Get(base + "curve=train_loss&metric=distinct_attention&window=0"),
              400),
      "INVALID_ARGUMENT: window: '0' is not an integer in [1, 10000]");
  EXPECT_EQ(ErrorOf(Get(base +
                        "curve=train_loss&metric=distinct_attention&level=nan"),
                    400)
                .substr(0, 35),
            "INVALID_ARGUMENT: matched: level 'n");
  const std::string unknown =
      ErrorOf(Get(base + "curve=val_colour&metric=distinct_attention"), 400);
  EXPECT_EQ(unknown.substr(0, 79),
            "INVALID_ARGUMENT: matched: no trial reports a curve named "
            "'val_colour' (its cur")
      << unknown;
  EXPECT_NE(unknown.find("train_loss"), std::string::npos) << unknown;
  const std::string unreached = ErrorOf(
      Get(base + "curve=train_loss&metric=distinct_attention&level=1e-9"), 400);
  EXPECT_EQ(
      unreached.rfind(
          "INVALID_ARGUMENT: matched: no trial reaches train_loss = 1e-09 "
          "(trailing mean of 1 reports; the trials' curves span ",
          0),
      0u)
      << unreached;
  EXPECT_EQ(ErrorOf(Get(base +
                        "curve=train_loss&metric=distinct_attention&by=colour"),
                    400),
            "INVALID_ARGUMENT: by: 'colour' is not an axis (parameterization, "
            "lr_ratio, eta_ov, seed, alpha, arm, state, trial)");
  EXPECT_EQ(ErrorOf(Get("/api/v1/sweeps/nope/matched?curve=train_loss&"
                        "metric=distinct_attention"),
                    404),
            "NOT_FOUND: no sweep named 'nope'");

  // Without levels: chosen levels in the order a falling loss reaches
  // them (decreasing), each reached by some trial, every arm counted at
  // each (docs/metrics.md, "Matched values").
  json m =
      GetJson(base + "curve=train_loss&metric=distinct_attention&num_levels=3");
  ASSERT_TRUE(m.contains("levels")) << m.dump();
  ASSERT_GE(m["levels"].size(), 2u) << m.dump();
  EXPECT_TRUE(m["downwards"].get<bool>());
  for (size_t i = 1; i < m["levels"].size(); ++i)
    EXPECT_LT(m["levels"][i].get<double>(), m["levels"][i - 1].get<double>());
  EXPECT_EQ(m["by"], json::parse(R"(["parameterization", "lr_ratio"])"));
  ASSERT_EQ(m["groups"].size(), 4 * m["levels"].size()) << m.dump();
  std::map<double, int> reached;
  for (const json& g : m["groups"]) {
    EXPECT_EQ(g["trials"], 2) << g.dump();
    EXPECT_LE(g["reached"].get<int>(), 2) << g.dump();
    reached[g["level"].get<double>()] += g["reached"].get<int>();
  }
  for (const auto& [level, n] : reached) EXPECT_GT(n, 0) << level;
}

TEST_F(DashboardApiTest, NoPathLeavesTheStaticRoot) {
  // The static root is share/qkov/dashboard: its parent holds other files,
  // and the source tree and /etc lie above.
  for (const char* path :
       {"/static/../index.html", "/static/../../bin/qkov-server",
        "/static/%2e%2e/%2e%2e/%2e%2e/CMakeCache.txt",
        "/static/..%2f..%2f..%2fCMakeCache.txt",
        "/static/....//....//etc/passwd", "/static//etc/passwd",
        "/static/%2fetc%2fpasswd", "/static/../../../../../../etc/passwd"}) {
    httplib::Result r = Get(path, "");
    ASSERT_TRUE(r) << path;
    EXPECT_TRUE(r->status == 404 || r->status == 400)
        << path << " -> " << r->status;
    EXPECT_EQ(r->body.find("root:"), std::string::npos) << path;
    EXPECT_EQ(r->body.find("CMAKE_"), std::string::npos) << path;
  }
}

// /api/v1/tasks is the task table the dashboard chooses its panels from,
// under a read token like every API path.
TEST_F(DashboardApiTest, TasksAreTheTaskTable) {
  EXPECT_EQ(ErrorOf(Get("/api/v1/tasks", ""), 401),
            "UNAUTHENTICATED: dashboard: log in at /login or send "
            "'Authorization: Bearer TOKEN'");
  json tasks = GetJson("/api/v1/tasks")["tasks"];
  ASSERT_EQ(tasks.size(), Tasks().size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskInfo& t = Tasks()[i];
    EXPECT_EQ(tasks[i]["name"], t.name);
    const std::string kind = tasks[i]["kind"].get<std::string>();
    v1::TaskKind parsed;
    ASSERT_TRUE(v1::TaskKind_Parse(kind, &parsed)) << kind;
    EXPECT_EQ(TaskName(parsed), t.name);
    EXPECT_EQ(tasks[i]["takes_alphas"], t.takes_alphas) << t.name;
    EXPECT_EQ(tasks[i]["curves"].get<std::vector<std::string>>(), t.curves);
    EXPECT_EQ(tasks[i]["views"]["figures"].get<std::vector<std::string>>(),
              t.views.figures);
    EXPECT_EQ(tasks[i]["results"].size(), t.results.size());
    // The task's own figures, as the dashboard draws them (figures.js).
    ASSERT_EQ(tasks[i]["curve_figures"].size(), t.curve_figures.size());
    for (size_t f = 0; f < t.curve_figures.size(); ++f) {
      const CurveFigure& want = t.curve_figures[f];
      const json& got = tasks[i]["curve_figures"][f];
      EXPECT_EQ(got["kind"], want.kind);
      EXPECT_EQ(got["name"], want.name);
      EXPECT_EQ(got["x"], want.x);
      EXPECT_EQ(got["x_log10_1p"], want.x_log10_1p);
      EXPECT_EQ(got["reverse_x"], want.reverse_x);
      EXPECT_EQ(got["overlay_matched"], want.overlay_matched);
      ASSERT_EQ(got["panels"].size(), want.panels.size());
      for (size_t p = 0; p < want.panels.size(); ++p) {
        EXPECT_EQ(got["panels"][p]["y"], want.panels[p].y);
        EXPECT_EQ(got["panels"][p]["log_y"], want.panels[p].log_y);
      }
    }
  }
  // The ODE draws Fig. 4 from its package's description.
  const TaskInfo* theory = FindTask("theory");
  ASSERT_NE(theory, nullptr);
  EXPECT_FALSE(theory->curve_figures.empty());
}

TEST_F(DashboardApiTest, RepliesEqualSqlOverTheDatabase) {
  const std::string db = server_->db_path();
  // The sweep list and one sweep: the counts the store keeps.
  json sweeps = GetJson("/api/v1/sweeps");
  ASSERT_EQ(sweeps["sweeps"].size(), 1u);
  EXPECT_EQ(sweeps["sweeps"][0]["name"], "dash");
  EXPECT_EQ(sweeps["sweeps"][0]["total_trials"], "8");
  EXPECT_EQ(sweeps["sweeps"][0]["owner"], "alice");

  // Aggregation: mean and n over seeds per (parameterization, ratio).
  json agg = GetJson(
      "/api/v1/sweeps/dash/aggregate?by=parameterization,lr_ratio&metric="
      "distinct_attention");
  EXPECT_EQ(agg["rows"], "8");
  ASSERT_EQ(agg["groups"].size(), 4u);
  auto sql = QueryRows(
      db,
      "SELECT t.parameterization, t.lr_ratio, AVG(r.value), COUNT(*) FROM "
      "trials t JOIN results r USING (trial_id) WHERE r.name = "
      "'distinct_attention' GROUP BY 1, 2 ORDER BY 1, 2");
  ASSERT_EQ(sql.size(), 4u);
  std::map<std::pair<std::string, double>, std::pair<double, int>> want;
  for (const auto& row : sql)
    want[{row[0], std::stod(row[1])}] = {std::stod(row[2]), std::stoi(row[3])};
  for (const json& g : agg["groups"]) {
    const auto key = std::make_pair(g["keys"][0].get<std::string>(),
                                    std::stod(g["keys"][1].get<std::string>()));
    ASSERT_TRUE(want.count(key)) << g.dump();
    const json& m = g["metrics"]["distinct_attention"];
    EXPECT_NEAR(m["mean"].get<double>(), want[key].first, 1e-12) << g.dump();
    EXPECT_EQ(m["n"], std::to_string(want[key].second));
    EXPECT_TRUE(m.contains("std") && m.contains("ci95")) << g.dump();
  }

  // The trial table: filtered on the server, sorted, paged.
  json page = GetJson("/api/v1/sweeps/dash/results?limit=3&offset=6");
  EXPECT_EQ(page["total_rows"], "8");
  EXPECT_EQ(page["rows"].size(), 2u);
  json sorted = GetJson(
      "/api/v1/sweeps/dash/results?sort=distinct_attention&order=desc&limit=8");
  ASSERT_EQ(sorted["rows"].size(), 8u);
  for (size_t i = 1; i < 8; ++i) {
    EXPECT_GE(
        sorted["rows"][i - 1]["values"]["distinct_attention"].get<double>(),
        sorted["rows"][i]["values"]["distinct_attention"].get<double>());
  }
  json fafo = GetJson(
      "/api/v1/sweeps/dash/"
      "results?where=parameterization%3DFAFO&where=seed%3D2");
  EXPECT_EQ(fafo["total_rows"], "2");
  for (const json& r : fafo["rows"]) {
    EXPECT_EQ(r["config"]["parameterization"], "FAFO");
    EXPECT_EQ(r["config"]["seed"], "2");
    EXPECT_EQ(r["state"], "DONE");
  }

  // Curves: every reported point of train_loss (7 per trial at this budget,
  // fewer than max_points), in step order.
  json curves = GetJson("/api/v1/sweeps/dash/curves?metric=train_loss&limit=8");
  EXPECT_EQ(curves["total_trials"], "8");
  ASSERT_EQ(curves["curves"].size(), 8u);
  for (const json& c : curves["curves"]) {
    const std::string id = c["trial_id"];
    const int64_t points = QueryInt(
        db, absl::StrCat("SELECT COUNT(DISTINCT step) FROM metrics WHERE "
                         "trial_id = '",
                         id, "' AND name = 'train_loss'"));
    EXPECT_GT(points, 2);
    EXPECT_EQ(static_cast<int64_t>(c["series"]["steps"].size()), points) << id;
  }
  json thin = GetJson(
      "/api/v1/sweeps/dash/curves?metric=train_loss&limit=1&max_points=3");
  ASSERT_EQ(thin["curves"].size(), 1u);
  const json& steps = thin["curves"][0]["series"]["steps"];
  EXPECT_LE(steps.size(), 4u);
  EXPECT_EQ(steps.back(), "300") << "the last point is always kept";

  // One trial and its metrics.
  const std::string id = sorted["rows"][0]["trial_id"];
  json trial = GetJson("/api/v1/trials/" + id);
  EXPECT_EQ(trial["trial_id"], id);
  ASSERT_EQ(trial["attempt_history"].size(), 1u);
  EXPECT_FALSE(trial["attempt_history"][0]["provenance_json"]
                   .get<std::string>()
                   .empty());
  EXPECT_FALSE(trial["heatmaps"].empty());
  json metrics = GetJson("/api/v1/trials/" + id + "/metrics?name=train_loss");
  ASSERT_EQ(metrics["series"].size(), 1u);
  EXPECT_EQ(metrics["series"][0]["name"], "train_loss");

  // The DTAP grid: per (parameterization, ratio), the cell-wise mean of its
  // trials' heatmaps.
  json grid = GetJson("/api/v1/sweeps/dash/heatmaps");
  ASSERT_EQ(grid["groups"].size(), 4u);
  for (const json& g : grid["groups"]) {
    EXPECT_EQ(g["n"], 2);
    const std::string p = g["parameterization"];
    const double ratio = g["lr_ratio"];
    json rows = GetJson(
        absl::StrCat("/api/v1/sweeps/dash/results?where=parameterization%3D", p,
                     "&where=lr_ratio%3D", ratio));
    ASSERT_EQ(rows["rows"].size(), 2u);
    std::vector<double> sum;
    for (const json& r : rows["rows"]) {
      json t = GetJson("/api/v1/trials/" + r["trial_id"].get<std::string>());
      const json& values = t["heatmaps"][0]["values"];
      sum.resize(values.size());
      for (size_t i = 0; i < values.size(); ++i)
        sum[i] += values[i].get<double>();
    }
    const json& mean = g["mean"]["values"];
    ASSERT_EQ(mean.size(), sum.size());
    for (size_t i = 0; i < sum.size(); ++i)
      EXPECT_NEAR(mean[i].get<double>(), sum[i] / 2, 1e-12) << p << " " << i;
  }
  EXPECT_EQ(
      GetJson("/api/v1/sweeps/dash/heatmaps?name=nothing")["groups"].size(),
      0u);
  EXPECT_EQ(ErrorOf(Get("/api/v1/sweeps/dash/heatmaps?per_group=0"), 400)
                .substr(0, 27),
            "INVALID_ARGUMENT: per_group");

  // Export: every row, as a download.
  httplib::Result csv = Get("/api/v1/sweeps/dash/export.csv");
  ASSERT_TRUE(csv);
  EXPECT_EQ(csv->status, 200);
  EXPECT_EQ(csv->get_header_value("Content-Type"), "text/csv");
  EXPECT_EQ(std::count(csv->body.begin(), csv->body.end(), '\n'), 9);
}

TEST_F(DashboardApiTest, EventsFollowChanges) {
  std::mutex mu;
  std::string received;
  httplib::Client c("127.0.0.1", http_port_);
  c.set_read_timeout(60, 0);
  std::thread reader([&] {
    c.Get("/api/v1/events?sweep=dash",
          httplib::Headers{{"Authorization", absl::StrCat("Bearer ", kReader)}},
          [&](const char* data, size_t n) {
            std::lock_guard<std::mutex> lock(mu);
            received.append(data, n);
            return received.find("\"paused\":true") == std::string::npos;
          });
  });
  // Ends the stream however the test ends.
  struct Join {
    httplib::Client& c;
    std::thread& t;
    ~Join() {
      c.stop();
      if (t.joinable()) t.join();
    }
  } join{c, reader};
  auto text = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return received;
  };
  ASSERT_TRUE(WaitUntil(
      [&] {
        return text().find("event: progress\ndata: ") != std::string::npos;
      },
      30));
  EXPECT_NE(text().find("\"paused\":false"), std::string::npos) << text();
  // A change anywhere (here: pausing the sweep) is pushed, not polled for.
  CommandResult r = Qkov({"pause", "dash"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(WaitUntil(
      [&] { return text().find("\"paused\":true") != std::string::npos; }, 30))
      << text();
  ASSERT_EQ(Qkov({"resume", "dash"}).exit_code, 0);
  EXPECT_EQ(ErrorOf(Get("/api/v1/events?sweep=nope"), 404),
            "NOT_FOUND: no sweep named 'nope'");
}

// With --tls_cert/--tls_key/--tls_client_ca the dashboard serves HTTPS with
// the gRPC port's certificate and asks for a client certificate too; its
// session cookie is Secure.
TEST(DashboardTlsTest, HttpsWithTheServersCertificatesAndClientCertificates) {
  // A refused handshake closes the socket under OpenSSL's writes.
  std::signal(SIGPIPE, SIG_IGN);
  TempDir dir;
  CommandResult certs = MakeTestCertificates(dir.path());
  ASSERT_EQ(certs.exit_code, 0) << certs.err;
  WriteFile(dir.File("tokens"), absl::StrCat("read-only ", kReader, "\n"));
  ServerUnderTest server(dir, {"--token_file=" + dir.File("tokens"),
                               "--tls_cert=" + dir.File("server.pem"),
                               "--tls_key=" + dir.File("server.key"),
                               "--tls_client_ca=" + dir.File("ca.pem"),
                               "--http_listen=127.0.0.1:0",
                               "--http_port_file=" + dir.File("http.port")});
  ASSERT_TRUE(
      WaitUntil([&] { return !ReadFile(dir.File("http.port")).empty(); }, 30));
  const int port = std::stoi(ReadFile(dir.File("http.port")));
  const httplib::Headers auth = {
      {"Authorization", absl::StrCat("Bearer ", kReader)}};

  httplib::Client plain("127.0.0.1", port);
  plain.set_read_timeout(5, 0);
  httplib::Result r = plain.Get("/api/v1/sweeps", auth);
  EXPECT_TRUE(!r || r->status != 200) << "plaintext must not be served";

  httplib::SSLClient anonymous("127.0.0.1", port);
  anonymous.set_ca_cert_path(dir.File("ca.pem"));
  anonymous.enable_server_certificate_verification(true);
  EXPECT_FALSE(anonymous.Get("/api/v1/sweeps", auth))
      << "a client without a certificate must be refused";

  httplib::SSLClient c("127.0.0.1", port, dir.File("client.pem"),
                       dir.File("client.key"));
  c.set_ca_cert_path(dir.File("ca.pem"));
  c.enable_server_certificate_verification(true);
  r = c.Get("/api/v1/sweeps", auth);
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  httplib::Result login = c.Post(
      "/login",
      httplib::Headers{{"Origin", absl::StrCat("https://127.0.0.1:", port)}},
      httplib::Params{{"token", kReader}});
  ASSERT_TRUE(login);
  EXPECT_NE(login->get_header_value("Set-Cookie").find("; Secure"),
            std::string::npos)
      << login->get_header_value("Set-Cookie");
}

}  // namespace
}  // namespace qkov::testing
