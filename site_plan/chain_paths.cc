#include "site_plan/chain_paths.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace geodesic::site_plan {
namespace {

absl::Status ValidateHops(const v1::ChainAssignment& assignment, int paths, const std::string& where) {
  for (int i = 0; i < assignment.hops_size(); ++i) {
    const v1::ChainHop& hop = assignment.hops(i);
    for (const uint32_t path : {hop.path_there(), hop.path_back()}) {
      if (path != 0 && static_cast<int64_t>(path) >= paths) {
        return absl::InvalidArgumentError(absl::StrCat(where, " hop ", i, " (service ", hop.service_id(),
                                                       ") names path ", path, "; the chain has ", paths));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateChainPaths(const v1::ChainPlan& chain) {
  const std::string prefix = absl::StrCat("chain ", chain.workload_id(), ": ");
  const auto& ends = chain.path_ends();
  if (!ends.empty() && ends[0] != 0) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, "path 0 is not empty (path_ends[0] = ", ends[0], ")"));
  }
  for (int i = 1; i < ends.size(); ++i) {
    if (ends[i] < ends[i - 1]) {
      return absl::InvalidArgumentError(absl::StrCat(prefix, "path_ends decreases at ", i));
    }
  }
  const uint32_t last = ends.empty() ? 0 : ends[ends.size() - 1];
  if (static_cast<int64_t>(last) != chain.path_facilities_size()) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, "path_ends ends at ", last, " but path_facilities has ",
                                                   chain.path_facilities_size()));
  }
  for (int i = 0; i < chain.path_facilities_size(); ++i) {
    if (static_cast<int64_t>(chain.path_facilities(i)) >= chain.path_facility_ids_size()) {
      return absl::InvalidArgumentError(absl::StrCat(prefix, "path_facilities[", i, "] = ", chain.path_facilities(i),
                                                     " is not among its ", chain.path_facility_ids_size(),
                                                     " facility ids"));
    }
  }
  const int paths = ChainPathCount(chain);
  if (auto status = ValidateHops(chain.primary(), paths, absl::StrCat(prefix, "primary")); !status.ok()) return status;
  for (int b = 0; b < chain.backups_size(); ++b) {
    if (auto status = ValidateHops(chain.backups(b).assignment(), paths, absl::StrCat(prefix, "backup ", b));
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

int ChainPathCount(const v1::ChainPlan& chain) { return chain.path_ends_size(); }

std::vector<std::string> ChainPathIds(const v1::ChainPlan& chain, uint32_t path) {
  std::vector<std::string> ids;
  if (path == 0 || static_cast<int64_t>(path) >= chain.path_ends_size()) return ids;
  const uint32_t begin = chain.path_ends(static_cast<int>(path) - 1), end = chain.path_ends(static_cast<int>(path));
  if (begin > end || static_cast<int64_t>(end) > chain.path_facilities_size()) return ids;  // not validated
  ids.reserve(end - begin);
  for (uint32_t i = begin; i < end; ++i) {
    const uint32_t facility = chain.path_facilities(static_cast<int>(i));
    if (static_cast<int64_t>(facility) >= chain.path_facility_ids_size()) return {};  // not validated
    ids.push_back(chain.path_facility_ids(static_cast<int>(facility)));
  }
  return ids;
}

uint32_t AddChainPath(v1::ChainPlan& chain, const std::vector<std::string>& facility_ids) {
  if (facility_ids.empty()) return 0;
  if (chain.path_ends_size() == 0) chain.add_path_ends(0);
  for (const std::string& id : facility_ids) {
    const auto& known = chain.path_facility_ids();
    const auto it = std::find(known.begin(), known.end(), id);
    const auto index = static_cast<uint32_t>(it - known.begin());
    if (it == known.end()) chain.add_path_facility_ids(id);
    chain.add_path_facilities(index);
  }
  chain.add_path_ends(static_cast<uint32_t>(chain.path_facilities_size()));
  return static_cast<uint32_t>(chain.path_ends_size() - 1);
}

}  // namespace geodesic::site_plan
