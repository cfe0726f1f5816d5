// A sweep's expansion into trials, and the canonical config + hash of each.
//
// A trial's canonical config is its fully defaulted qkov.v1.TrialConfig as
// JSON (protobuf's JSON printer, proto field names, every field printed);
// config_hash = sha256(canonical config). It does not depend on where the
// point sits in the grid, so re-submitting a sweep (in any axis order)
// matches its points by hash. Trial ids are the store's (storage::TrialIdOf).
// Below sweep_spec.h and adaptive_sweep.h, which expand the grids they
// check or search.
#ifndef QKOV_SERVER_CORE_SWEEP_EXPANSION_H_
#define QKOV_SERVER_CORE_SWEEP_EXPANSION_H_

#include <string>
#include <vector>

#include "common/sha256.h"
#include "qkov/v1/config.pb.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov::core {

struct ExpandedTrial {
  qkov::v1::TrialConfig config;  // axes only; the training part is the arm's
  std::string config_json;       // the full config, canonical JSON
  std::string axes_pb;           // `config`, serialized binary (no training)
  std::string config_hash;
  // An arm's trial: its arm's training part as a serialized TrialConfig
  // (TrainingPb's form); empty: the sweep's, TrainingPb(spec).
  std::string training_pb;
};

// Cartesian product in the order arms x parameterizations x lr_ratios x
// eta_ovs x seeds x alphas (an empty parameterization or alpha axis counts
// as one unset value, no arms as one unnamed arm; an arm's own ratio or
// base rate replaces that axis for it). Expects a valid spec with defaults
// applied.
std::vector<ExpandedTrial> ExpandSweep(const qkov::v1::SweepSpec& spec);

// A TrialConfig holding only the spec's training part, serialized. Serialized
// protobuf messages concatenate as a merge, so a trial's axes_pb followed by
// this parses as its full config (what a lease sends).
std::string TrainingPb(const qkov::v1::SweepSpec& spec);

std::string CanonicalJson(const google::protobuf::Message& message);
using ::qkov::Sha256Hex;  // common/sha256.h

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_SWEEP_EXPANSION_H_
