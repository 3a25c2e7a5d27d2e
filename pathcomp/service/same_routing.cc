#include "pathcomp/service/same_routing.h"

#include <algorithm>

namespace geodesic::pathcomp {
namespace {

bool SameDependencies(const v1::Plan& a, const v1::Plan& b) {
  if (a.single_facility_dependencies_size() != b.single_facility_dependencies_size()) return false;
  for (int i = 0; i < a.single_facility_dependencies_size(); ++i) {
    if (a.single_facility_dependencies(i).SerializeAsString() !=
        b.single_facility_dependencies(i).SerializeAsString()) {
      return false;
    }
  }
  return true;
}

// The same messages in the same order.
template <typename Entries>
bool SameEntries(const Entries& a, const Entries& b) {
  if (a.size() != b.size()) return false;
  for (int i = 0; i < a.size(); ++i) {
    if (a[i].SerializeAsString() != b[i].SerializeAsString()) return false;
  }
  return true;
}

// The same numbers in the same order.
template <typename Numbers>
bool SameNumbers(const Numbers& a, const Numbers& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

bool SameRouting(const v1::Plan& published, const v1::Plan& computed) {
  const v1::Plan& a = published;
  const v1::Plan& b = computed;
  if (b.moved_workload_ids_size() != 0 || !SameDependencies(a, b)) return false;
  if (a.sites_size() != b.sites_size()) return false;
  if (a.unreachable_size() != b.unreachable_size()) return false;
  for (int i = 0; i < a.unreachable_size(); ++i) {
    if (a.unreachable(i) != b.unreachable(i)) return false;
  }
  for (int i = 0; i < a.sites_size(); ++i) {
    const auto& x = a.sites(i);
    const auto& y = b.sites(i);
    // Routes refer to the tables by index: both must be the same.
    if (x.facility_id() != y.facility_id() || !SameEntries(x.routes(), y.routes()) ||
        !SameEntries(x.ports(), y.ports()) || !SameEntries(x.groups(), y.groups()) ||
        !SameNumbers(x.path_node_parents(), y.path_node_parents()) ||
        !SameNumbers(x.path_node_facilities(), y.path_node_facilities()) ||
        !SameNumbers(x.path_nodes(), y.path_nodes()) || !SameNumbers(x.path_latencies_us(), y.path_latencies_us()) ||
        !SameEntries(x.failures(), y.failures()) ||
        x.facility_ids_size() != y.facility_ids_size() ||
        !std::equal(x.facility_ids().begin(), x.facility_ids().end(), y.facility_ids().begin())) {
      return false;
    }
  }
  return true;
}

}  // namespace geodesic::pathcomp
