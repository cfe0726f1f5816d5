// SweepControl: the client API's sweeps and trials (sweep.proto): submit,
// read, list, cancel, delete, pause, retry, the server-wide leasing switch,
// and the progress that watch streams send. Reached through
// Coordinator::sweeps(); thread-safe.
#ifndef QKOV_SERVER_CORE_SWEEP_CONTROL_H_
#define QKOV_SERVER_CORE_SWEEP_CONTROL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "qkov/v1/sweep.pb.h"
#include "server/core/coordinator_core.h"
#include "storage/records.h"

namespace qkov::core {

class SweepControl {
 public:
  static constexpr int kBriefProgressTrials = 50;

  explicit SweepControl(CoordinatorCore* core) : core_(core) {}

  // Every call takes the Actor the service authenticated (the default, an
  // anonymous actor, is what a server without tokens passes).
  //
  // Cancel, pause, resume, retry and re-submission are refused with
  // PERMISSION_DENIED to anyone but the sweep's owner or an admin.
  absl::StatusOr<qkov::v1::SubmitSweepResponse> SubmitSweep(
      const qkov::v1::SubmitSweepRequest& r, const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::Sweep> GetSweep(const std::string& name);
  absl::StatusOr<qkov::v1::ListSweepsResponse> ListSweeps();
  absl::StatusOr<qkov::v1::CancelSweepResponse> CancelSweep(
      const std::string& name, const storage::Actor& actor = {});
  // The same owner rule; also drops what the coordinator holds of the sweep
  // in memory (result rows, progress views).
  absl::StatusOr<qkov::v1::DeleteSweepResponse> DeleteSweep(
      const std::string& name, const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::Sweep> PauseSweep(
      const qkov::v1::PauseSweepRequest& r, const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::RetrySweepResponse> RetrySweep(
      const std::string& name, const storage::Actor& actor = {});
  absl::StatusOr<qkov::v1::ListTrialsResponse> ListTrials(
      const qkov::v1::ListTrialsRequest& r);
  absl::StatusOr<qkov::v1::Trial> GetTrial(const std::string& trial_id);
  // The server-wide leasing switch (docs/cluster.md, "Stop leasing"): sets
  // it when `r.paused` is set (an admin's alone: PERMISSION_DENIED), and
  // returns the state either way.
  absl::StatusOr<qkov::v1::LeasingState> Leasing(
      const qkov::v1::LeasingRequest& r, const storage::Actor& actor = {});
  // One progress message: the sweep, whether it is finished, and trials
  // changed at or after *since (advanced to now). `brief`: the changed
  // trials carry only id, state and last step (no config, attempts or
  // latest values), the kBriefProgressTrials most recently changed of them,
  // newest first, for the dashboard's event stream.
  //
  // The full form is read once for all watchers of a sweep: a view (the
  // sweep, and its trials changed lately with their latest values) is
  // shared by every call that comes while nothing changed, or within
  // `reuse` of it (clock_'s time; WatchSweep passes kProgressReuse). A
  // shared view may be older than the call, so *since becomes the time its
  // reads began, less kSinceMarginMs: what changed after that comes in a
  // later round, and nothing is missed.
  absl::StatusOr<qkov::v1::SweepProgress> Progress(
      const std::string& name, absl::Time* since, bool brief = false,
      absl::Duration reuse = absl::ZeroDuration());
  static constexpr absl::Duration kProgressReuse = absl::Milliseconds(500);
  // How far before a view's reads the next round starts (Progress): trials
  // changed in it come again, and none committed late is missed.
  static constexpr int64_t kSinceMarginMs = 1000;

 private:
  absl::StatusOr<qkov::v1::Sweep> ToSweep(const storage::SweepRecord& r);
  absl::StatusOr<qkov::v1::Trial> ToTrial(const storage::TrialRecord& r);

  // A sweep's progress as watchers see it (Progress), shared by them.
  struct ProgressView {
    uint64_t change_count = 0;     // ChangeCount() before its reads
    int64_t read_ms = 0;           // NowMs() before its reads
    int64_t from_ms = 0;           // holds every trial changed at or after this
    qkov::v1::SweepProgress base;  // sweep and `finished`; no trials
    std::vector<std::pair<int64_t, qkov::v1::Trial>> trials;  // updated_ms
  };
  absl::StatusOr<std::shared_ptr<const ProgressView>> ReadProgressView(
      const std::string& name, int64_t from_ms);
  // Views by sweep name; at most kProgressViews (the oldest go first).
  static constexpr size_t kProgressViews = 64;
  absl::Mutex views_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const ProgressView>> views_
      ABSL_GUARDED_BY(views_mu_);

  CoordinatorCore* core_;
};

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_SWEEP_CONTROL_H_
