#include "worker/agent/worker_metrics.h"

#include <openssl/crypto.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "http/metrics_page.h"
#include "worker/training/device_memory.h"
#include "worker/training/torch_status.h"

namespace qkov::agent {
using http::MetricFamilyOf;
using http::MetricSample;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

absl::StatusOr<std::unique_ptr<WorkerMetrics>> WorkerMetrics::Start(
    Options options) {
  std::unique_ptr<WorkerMetrics> m(new WorkerMetrics(std::move(options)));
  http::HttpServer::Options h;
  h.listen = m->options_.listen;
  h.limits.max_connections = 16;
  h.limits.max_connections_per_address = 8;
  h.limits.handler_threads = 1;
  h.limits.io_threads = 1;
  WorkerMetrics* self = m.get();
  h.handler = [self](const http::HttpRequest& r) { return self->Serve(r); };
  absl::StatusOr<std::unique_ptr<http::HttpServer>> http =
      http::HttpServer::Start(std::move(h));
  if (!http.ok()) {
    return absl::Status(
        http.status().code(),
        absl::StrCat("--metrics_listen: ", http.status().message()));
  }
  m->http_ = *std::move(http);
  return m;
}

http::HttpReply WorkerMetrics::Serve(const http::HttpRequest& request) {
  std::function<absl::Status(absl::string_view)> check;
  if (!options_.token.empty()) {
    check = [this](absl::string_view token) {
      // Constant time in the token's bytes.
      if (token.size() == options_.token.size() &&
          CRYPTO_memcmp(token.data(), options_.token.data(), token.size()) ==
              0) {
        return absl::OkStatus();
      }
      return absl::UnauthenticatedError("/metrics: missing or wrong token");
    };
  }
  return http::ServeMetricsPage(
      request, check, [this] { ++refused_; }, [this] { return Scrape(); });
}

std::string WorkerMetrics::Scrape() const {
  std::vector<MetricFamily> f;
  const WorkerCounters& c = *options_.counters;
  f.push_back(http::MetricFamilyOf(
      "qkov_worker_training_steps_total",
      "Training steps done by this process's trials (counted "
      "at each report).",
      MetricType::Counter,
      {http::MetricSample(static_cast<double>(c.training_steps.load()))}));
  f.push_back(http::MetricFamilyOf(
      "qkov_worker_trials_completed_total",
      "Trials whose completion the coordinator accepted.", MetricType::Counter,
      {http::MetricSample(static_cast<double>(c.trials_completed.load()))}));
  f.push_back(http::MetricFamilyOf(
      "qkov_worker_rpc_retries_total",
      "Calls to the coordinator sent again after a retryable failure.",
      MetricType::Counter,
      {http::MetricSample(static_cast<double>(c.rpc_retries.load()))}));
  f.push_back(http::MetricFamilyOf(
      "qkov_worker_trials_in_flight", "Trials this process trains now.",
      MetricType::Gauge,
      {http::MetricSample(static_cast<double>(
          options_.trials_in_flight ? options_.trials_in_flight() : 0))}));
  std::vector<ClientMetric> in_use, available;
  for (const std::string& name : options_.devices) {
    absl::StatusOr<torch::Device> device =
        training::ParseDevice(name, "--device");
    if (!device.ok()) continue;
    if (absl::StatusOr<int64_t> b = training::MemoryInUseBytes(*device);
        b.ok()) {
      in_use.push_back(
          http::MetricSample(static_cast<double>(*b), {{"device", name}}));
    }
    if (absl::StatusOr<int64_t> b = training::AvailableMemoryBytes(*device);
        b.ok()) {
      available.push_back(
          http::MetricSample(static_cast<double>(*b), {{"device", name}}));
    }
  }
  f.push_back(http::MetricFamilyOf(
      "qkov_worker_device_memory_in_use_bytes",
      "Memory in use: on cpu this process's resident memory, "
      "on a CUDA device what every process uses of it.",
      MetricType::Gauge, std::move(in_use)));
  f.push_back(http::MetricFamilyOf(
      "qkov_worker_device_memory_available_bytes",
      "Memory available for training on the device (what the "
      "worker sizes its batches by).",
      MetricType::Gauge, std::move(available)));
  f.push_back(http::MetricFamilyOf(
      "qkov_worker_metrics_scrapes_refused_total",
      "Requests for /metrics refused for their token (401).",
      MetricType::Counter,
      {http::MetricSample(static_cast<double>(refused_.load()))}));
  f.push_back(http::MetricFamilyOf(
      "qkov_build_info",
      "Always 1; `version` is the code version results record "
      "in their provenance (qkov-worker --version).",
      MetricType::Gauge,
      {http::MetricSample(1, {{"version", CodeVersion()}})}));
  return prometheus::TextSerializer().Serialize(f);
}

}  // namespace qkov::agent
