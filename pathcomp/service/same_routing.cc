#include "pathcomp/service/same_routing.h"

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
    if (x.facility_id() != y.facility_id() || x.routes_size() != y.routes_size()) return false;
    for (int r = 0; r < x.routes_size(); ++r) {
      if (x.routes(r).SerializeAsString() != y.routes(r).SerializeAsString()) return false;
    }
  }
  return true;
}

}  // namespace geodesic::pathcomp
