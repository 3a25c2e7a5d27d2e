#pragma once
// The positions of a column-generation run's flow groups by source, so that
// one shortest-path tree serves all of a source's groups.
// Internal to pathcomp/solver. Pure; thread-compatible.
#include <span>
#include <vector>

#include "pathcomp/solver/internal/path_master.h"

namespace geodesic::pathcomp::internal {

class GroupsBySource {
 public:
  GroupsBySource(std::span<FlowGroup* const> groups, int node_count) : offsets_(node_count + 1, 0) {
    for (const FlowGroup* group : groups) ++offsets_[group->src + 1];
    for (int v = 0; v < node_count; ++v) offsets_[v + 1] += offsets_[v];
    positions_.resize(groups.size());
    std::vector<int> fill(offsets_.begin(), offsets_.end() - 1);
    for (size_t g = 0; g < groups.size(); ++g) positions_[fill[groups[g]->src]++] = static_cast<int>(g);
  }

  // The positions in `groups` of the groups from `source`, in order.
  std::span<const int> of(int source) const {
    return std::span<const int>(positions_).subspan(offsets_[source], offsets_[source + 1] - offsets_[source]);
  }

 private:
  std::vector<int> offsets_, positions_;
};

}  // namespace geodesic::pathcomp::internal
