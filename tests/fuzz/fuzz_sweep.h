// The sweep the server-side fuzz targets run against: FAFO at ratio 1,
// eta_OV 0.1, seeds 1..`seeds`, named "fuzz", submitted to `core`.
#ifndef TESTS_FUZZ_FUZZ_SWEEP_H_
#define TESTS_FUZZ_FUZZ_SWEEP_H_

#include <cstdlib>

#include "server/core/coordinator.h"

namespace qkov::fuzz {

inline void SubmitFuzzSweep(qkov::core::Coordinator* core, int seeds) {
  qkov::v1::SubmitSweepRequest s;
  s.mutable_spec()->set_name("fuzz");
  auto* axes = s.mutable_spec()->mutable_axes();
  axes->add_parameterizations(qkov::v1::FAFO);
  axes->add_lr_ratios(1);
  axes->add_eta_ovs(0.1);
  for (int seed = 1; seed <= seeds; ++seed) axes->add_seeds(seed);
  if (!core->sweeps().SubmitSweep(s).ok()) std::abort();
}

}  // namespace qkov::fuzz

#endif  // TESTS_FUZZ_FUZZ_SWEEP_H_
