#include "pathcomp/solver/internal/phase_bounds.h"

#include <algorithm>

namespace geodesic::pathcomp::internal {
namespace {

std::vector<double> OpenCapacity(const PhaseSpec& spec) {
  std::vector<double> capacity(spec.arc_scale.size());
  for (size_t a = 0; a < capacity.size(); ++a) capacity[a] = spec.arc_open[a] ? spec.arc_scale[a] : 0;
  return capacity;
}

}  // namespace

// The bound `basis` remembers, when it still holds for `spec`; else 0.
double InheritedLowerBound(const PhaseSpec& spec, const MasterBasis& basis) {
  if (spec.phase != kUtilizationPhase || basis.bound_group_demand != spec.group_upper ||
      basis.bound_arc_upper.size() != spec.arc_upper.size() || spec.utilization_floor < basis.bound_floor) {
    return 0;
  }
  const std::vector<double> capacity = OpenCapacity(spec);
  for (size_t a = 0; a < capacity.size(); ++a) {
    if (capacity[a] > basis.bound_arc_capacity[a] || spec.arc_upper[a] > basis.bound_arc_upper[a]) return 0;
  }
  return basis.proven_lower_bound;
}

void RememberLowerBound(const PhaseSpec& spec, double bound, const std::vector<int>& left_out, MasterBasis& basis) {
  basis.proven_lower_bound = bound;
  basis.bound_left_out = left_out;
  basis.bound_arc_capacity = OpenCapacity(spec);
  basis.bound_arc_upper = spec.arc_upper;
  basis.bound_group_demand = spec.group_upper;
  basis.bound_floor = spec.utilization_floor;
}

// The bound the remembered prices prove for `spec` without a search (see
// MasterBasis::price_weights); 0 when none are remembered. Holds where the
// inherited bound holds: nothing grew since, and no group is left out.
double RememberedPriceBound(const PhaseSpec& spec, const MasterBasis& basis) {
  if (basis.price_weights.size() != spec.arc_open.size()) return 0;
  double numerator = basis.price_numerator, scale = 0;
  for (size_t a = 0; a < basis.price_weights.size(); ++a) {
    const double weight = basis.price_weights[a];
    if (weight <= 0) continue;
    if (spec.arc_open[a]) {
      scale += weight * spec.arc_scale[a];
    } else {
      numerator += weight * basis.price_arc_upper[a];  // its term no longer counts
    }
  }
  return scale > 0 ? std::max(spec.utilization_floor, numerator / scale) : 0;
}

}  // namespace geodesic::pathcomp::internal
