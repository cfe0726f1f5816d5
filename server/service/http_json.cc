#include "server/service/http_json.h"

#include <google/protobuf/util/json_util.h>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/task_info.h"
#include "qkov/v1/config.pb.h"

namespace qkov::service {

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string out;
  auto st = google::protobuf::util::MessageToJsonString(m, &out, options);
  if (!st.ok())
    return absl::InternalError(absl::StrCat("JSON: ", st.ToString()));
  return out;
}

std::string TasksJson() {
  nlohmann::json tasks = nlohmann::json::array();
  for (const TaskInfo& t : Tasks()) {
    nlohmann::json results = nlohmann::json::array();
    for (const ResultName& r : t.results) results.push_back(r.name);
    const MetricDefaults& v = t.views;
    nlohmann::json figures = nlohmann::json::array();
    for (const CurveFigure& f : t.curve_figures) {
      nlohmann::json panels = nlohmann::json::array();
      for (const CurvePanel& p : f.panels)
        panels.push_back({{"y", p.y}, {"label", p.label}, {"log_y", p.log_y}});
      figures.push_back({{"kind", f.kind},
                         {"name", f.name},
                         {"title", f.title},
                         {"x", f.x},
                         {"x_label", f.x_label},
                         {"x_log10_1p", f.x_log10_1p},
                         {"log_x", f.log_x},
                         {"reverse_x", f.reverse_x},
                         {"columns", f.columns},
                         {"panels", panels},
                         {"overlay_matched", f.overlay_matched}});
    }
    tasks.push_back({
        {"name", t.name},
        // As a sweep's JSON spells it: config.proto's name of the number,
        // or the number of a task config.proto does not name.
        {"kind", qkov::v1::TaskKind_IsValid(t.kind)
                     ? nlohmann::json(qkov::v1::TaskKind_Name(
                           static_cast<qkov::v1::TaskKind>(t.kind)))
                     : nlohmann::json(t.kind)},
        {"settings", t.settings},
        {"parameterized", t.parameterized},
        {"takes_alphas", t.takes_alphas},
        {"searchable", t.searchable},
        {"results", results},
        {"curves", t.curves},
        {"views",
         {{"results", v.results},
          {"summary", v.summary},
          {"ratio", v.ratio},
          {"curves", v.curves},
          {"latest", v.latest},
          {"figures", v.figures}}},
        {"curve_figures", figures},
    });
  }
  return nlohmann::json{{"tasks", tasks}}.dump();
}

}  // namespace qkov::service
