#pragma once
// Measures of a plan that the simulator and the live runner report alike.
// Pure.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "geodesic/v1/plan.pb.h"

namespace geodesic::sim {

// The p-quantile (nearest rank) of `values`; 0 when empty.
inline uint64_t Percentile(std::vector<uint64_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// The plan's single-facility dependencies as "workload@facility".
inline std::set<std::string> DependencyKeys(const v1::Plan& plan) {
  std::set<std::string> keys;
  for (const auto& d : plan.single_facility_dependencies()) keys.insert(d.workload_id() + "@" + d.facility_id());
  return keys;
}

}  // namespace geodesic::sim
