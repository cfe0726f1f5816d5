#include "http/metrics_page.h"

#include <utility>

#include "absl/strings/match.h"

namespace qkov::http {

prometheus::ClientMetric MetricSample(
    double value, std::vector<prometheus::ClientMetric::Label> labels) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  m.counter.value = value;
  return m;
}

prometheus::MetricFamily MetricFamilyOf(
    const char* name, const char* help, prometheus::MetricType type,
    std::vector<prometheus::ClientMetric> samples) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  f.metric = std::move(samples);
  return f;
}

HttpReply ServeMetricsPage(
    const HttpRequest& request,
    const std::function<absl::Status(absl::string_view token)>& check_token,
    const std::function<void()>& refused,
    const std::function<std::string()>& scrape) {
  if (request.path != "/metrics") {
    return ErrorReply(absl::NotFoundError(
        "no such page: the metrics listener serves /metrics only"));
  }
  if (request.method != "GET" && request.method != "HEAD") {
    HttpReply reply = ErrorReply(
        absl::InvalidArgumentError("/metrics: only GET and HEAD"), 405);
    reply.headers.emplace_back("Allow", "GET, HEAD");
    return reply;
  }
  if (check_token) {
    const std::string header = request.Header("Authorization");
    constexpr absl::string_view kBearer = "Bearer ";
    const absl::string_view token =
        absl::StartsWithIgnoreCase(header, kBearer)
            ? absl::string_view(header).substr(kBearer.size())
            : absl::string_view();
    if (absl::Status st = check_token(token); !st.ok()) {
      if (refused) refused();
      HttpReply reply = ErrorReply(st);
      if (reply.status == 401)
        reply.headers.emplace_back("WWW-Authenticate", "Bearer");
      return reply;
    }
  }
  HttpReply reply;
  reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
  reply.body = scrape();
  reply.headers.emplace_back("Cache-Control", "no-store");
  return reply;
}

}  // namespace qkov::http
