#pragma once
// The utilization bounds a phase carries from one run to the next (see
// MasterBasis): what the last run proved, when it still holds, and what its
// link prices prove after a failure without a search.
//
// Internal to pathcomp/solver. Pure; thread-compatible.
#include <vector>

#include "pathcomp/solver/internal/path_master.h"

namespace geodesic::pathcomp::internal {

// The bound `basis` remembers, when it still holds for `spec` (nothing grew,
// same demands and floor); else 0. The caller checks the left-out groups.
[[nodiscard]] double InheritedLowerBound(const PhaseSpec& spec, const MasterBasis& basis);

// Remembers `bound` as proven for `spec` with `left_out` groups left out.
void RememberLowerBound(const PhaseSpec& spec, double bound, const std::vector<int>& left_out, MasterBasis& basis);

// The bound the remembered prices prove for `spec` without a search (see
// MasterBasis::price_weights); 0 when none are remembered. Holds where the
// inherited bound holds.
[[nodiscard]] double RememberedPriceBound(const PhaseSpec& spec, const MasterBasis& basis);

}  // namespace geodesic::pathcomp::internal
