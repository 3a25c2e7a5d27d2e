#pragma once
// The network an importer (REPETITA, GraphML) is building, and the rules the
// importers share for what a foreign file does not say:
//
// - Every node of the file becomes a facility (display name = the label,
//   region "") with one backbone router "<facility>-r".
// - Facility i (0-based, in file order) announces 10.<i / 256>.<i % 256>.0/24,
//   so workloads can name a destination; at most 65,536 facilities.
// - A position at exactly (0, 0) means "unknown" (the Topology Zoo datasets
//   use it for nodes they could not place).
// - A link whose length is unknown gets the mean latency of the file's other
//   links (the rule the REPETITA datasets apply to their own delay column),
//   or kUnknownLatencyFallbackUs when no link has a known length.
//
// Internal to the topology component. Not thread-safe.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/internal/import_ids.h"
#include "topology/inventory.h"

namespace geodesic::topology::internal {

inline constexpr size_t kMaxImportedFacilities = 65536;
inline constexpr uint64_t kUnknownLatencyFallbackUs = 1000;

// The prefix the index-th imported facility announces (index < 65,536).
std::string SynthesizedPrefix(size_t index);

// True unless the position is exactly (0, 0).
bool IsPlaced(const v1::GeoPosition& position);

class ImportedNetwork {
 public:
  // Adds a facility for a node labelled `label`; its id is SanitizeId(label)
  // made unique with -2, -3, ... ("site-<index>" when the label leaves
  // nothing). Returns its index: 0, 1, ... in call order. The caller keeps
  // within kMaxImportedFacilities.
  size_t AddSite(std::string_view label, const v1::GeoPosition& position);
  size_t site_count() const { return topology_.facilities.size(); }
  const v1::Facility& site(size_t index) const { return topology_.facilities[index]; }

  // FiberLatencyUs of the great circle between two sites; nullopt when
  // either is unplaced.
  std::optional<uint64_t> PlacedLatencyUs(size_t a, size_t b) const;

  // Adds a directed link between the backbone routers of two different
  // sites; the id must be valid and unclaimed (see link_ids()). A missing
  // latency is filled in by Finish.
  void AddLink(const std::string& id, size_t src, size_t dst, double capacity_gbps,
               uint32_t metric, std::optional<uint64_t> latency_us);
  // Adds an elephant flow from `src` to the prefix of `dst`, priority 0.
  void AddElephant(const std::string& id, size_t src, size_t dst, double demand_gbps);

  IdRegistry& link_ids() { return link_ids_; }
  IdRegistry& workload_ids() { return workload_ids_; }

  // Fills the unknown latencies and hands the topology over.
  Topology Finish() &&;

 private:
  Topology topology_;
  IdRegistry facility_ids_;
  IdRegistry link_ids_;
  IdRegistry workload_ids_;
  std::vector<size_t> unknown_latency_links_;
};

}  // namespace geodesic::topology::internal
