// The /metrics page both programs serve (qkov-server: server_metrics.h,
// qkov-worker: worker/agent/worker_metrics.h): the request checks, the
// token, and helpers to build metric families read at scrape time in
// prometheus-cpp's types.
#ifndef QKOV_HTTP_METRICS_PAGE_H_
#define QKOV_HTTP_METRICS_PAGE_H_

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "http/http_message.h"

namespace qkov::http {

// A sample of a gauge or counter (the value is set in both).
prometheus::ClientMetric MetricSample(
    double value, std::vector<prometheus::ClientMetric::Label> labels = {});
prometheus::MetricFamily MetricFamilyOf(
    const char* name, const char* help, prometheus::MetricType type,
    std::vector<prometheus::ClientMetric> samples);

// GET or HEAD /metrics: `check_token` (may be empty: no token asked for)
// is given the bearer token of the Authorization header ("" when absent)
// and returns UNAUTHENTICATED (401, with WWW-Authenticate: Bearer) or
// PERMISSION_DENIED (403) to refuse, after which `refused` runs. Then the
// reply is `scrape()` as text/plain; version=0.0.4. Any other path is 404,
// any other method 405.
HttpReply ServeMetricsPage(
    const HttpRequest& request,
    const std::function<absl::Status(absl::string_view token)>& check_token,
    const std::function<void()>& refused,
    const std::function<std::string()>& scrape);

}  // namespace qkov::http

#endif  // QKOV_HTTP_METRICS_PAGE_H_
