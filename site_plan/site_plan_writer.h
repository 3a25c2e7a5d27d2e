#pragma once
// Builds a compact SitePlan (proto/geodesic/v1/plan.proto) as routes come:
// ports, facility ids, next-hop groups, paths and failures are each added to
// the plan's tables once and referred to by index, whatever number of routes
// and backups share them. The plan it writes always passes
// site_plan::ValidateIndices.
//
// `plan` must outlive the writer, pass ValidateIndices (an empty plan does)
// and not be changed other than through it while it lives (its header fields
// excepted). What its tables already hold is reused (the first entry of each,
// when repeated). Thread-compatible.
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "geodesic/v1/plan.pb.h"

namespace geodesic::site_plan {

class SitePlanWriter {
 public:
  explicit SitePlanWriter(v1::SitePlan* plan);
  SitePlanWriter(const SitePlanWriter&) = delete;  // its tables' hashes refer to it
  SitePlanWriter& operator=(const SitePlanWriter&) = delete;

  // The index of each table entry, added when new. A port is known by its
  // link id (the first call's peer ids stay).
  uint32_t Port(const std::string& link_id, const std::string& peer_facility_id, const std::string& peer_node_id);
  uint32_t Facility(const std::string& facility_id);
  // `ports` and `weights` have the same length; weights at least 1.
  uint32_t Group(std::span<const uint32_t> ports, std::span<const uint32_t> weights);
  // A path by its facilities (indices into the plan's facility_ids).
  uint32_t Path(std::span<const uint32_t> facilities, uint64_t latency_us);
  // A path by the node of its last facility in the plan's path tree
  // (plan.proto's path_nodes), for writers that know it; nodes come from
  // PathNode: `parent`'s path followed by `facility` (node 0: the empty
  // path; `parent` a node the plan has, `facility` an index into its
  // facility_ids).
  uint32_t PathNode(uint32_t parent, uint32_t facility);
  uint32_t PathEndingAt(uint32_t node, uint64_t latency_us);
  uint32_t Failure(const v1::FailureScope& failure);

  // Appends a route of table indices; its backups are added with AddBackup.
  v1::Route& AddRoute(std::string prefix, uint32_t destination, uint32_t group, uint32_t path);
  static void AddBackup(v1::Route& route, uint32_t failure, uint32_t group, uint32_t path);

  // The same by ids, for tools and tests: interns what it names.
  v1::Route& AddRoute(std::string prefix, const std::string& destination_id, const std::vector<v1::NextHop>& next_hops,
                      const std::vector<std::string>& path_facility_ids, uint64_t path_latency_us);
  void AddBackup(v1::Route& route, const v1::FailureScope& failure, const std::vector<v1::NextHop>& next_hops,
                 const std::vector<std::string>& path_facility_ids, uint64_t path_latency_us);

 private:
  uint32_t GroupOf(const std::vector<v1::NextHop>& next_hops);
  uint32_t PathOf(const std::vector<std::string>& path_facility_ids, uint64_t latency_us);

  // Groups by content, as indices into the plan's own table: looked up with
  // a view of the new entry, nothing copied into a key.
  struct GroupView {
    std::span<const uint32_t> ports, weights;
  };
  static size_t Hash(const GroupView& group);
  GroupView GroupAt(uint32_t index) const;
  // The sets hold indices; their hash and equality see them as the views.
  struct GroupIndexHash {
    using is_transparent = void;
    const SitePlanWriter* writer = nullptr;
    size_t operator()(uint32_t index) const { return Hash(writer->GroupAt(index)); }
    size_t operator()(const GroupView& group) const { return Hash(group); }
  };
  struct GroupIndexEq {
    using is_transparent = void;
    const SitePlanWriter* writer = nullptr;
    bool operator()(uint32_t a, uint32_t b) const { return a == b; }
    bool operator()(const GroupView& a, uint32_t b) const;
    bool operator()(uint32_t a, const GroupView& b) const { return (*this)(b, a); }
  };
  v1::SitePlan* plan_;
  absl::flat_hash_map<std::string, uint32_t> ports_;
  absl::flat_hash_map<std::string, uint32_t> facilities_;
  absl::flat_hash_set<uint32_t, GroupIndexHash, GroupIndexEq> groups_;
  // A path tree node by (parent node, facility), a path by (node, latency).
  absl::flat_hash_map<uint64_t, uint32_t> path_nodes_;
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, uint32_t> paths_;
  absl::flat_hash_map<std::tuple<int, std::string, uint32_t>, uint32_t> failures_;
};

}  // namespace geodesic::site_plan
