#pragma once
// A compact, immutable graph of the backbone for one solve: facilities as
// dense indices, usable links as weighted arcs. Built from the model (entities
// plus operator intents); the solver reads nothing else.
// Pure: no I/O, no clock, no threads. Thread-compatible; immutable once built.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "geodesic/v1/model.pb.h"

namespace geodesic::pathcomp {

// What the solver is given: the model's entities as they are now.
struct ModelView {
  std::vector<v1::Facility> facilities;
  std::vector<v1::Node> nodes;
  std::vector<v1::Link> links;
  std::vector<v1::Intent> intents;
};

struct Arc {
  int link;  // index into Snapshot::links()
  int src;   // facility index
  int dst;   // facility index
  uint64_t cost_us;
};

// Degraded links are kept but cost this much more, so they carry traffic only
// when no healthy path exists.
inline constexpr uint64_t kDegradedPenaltyUs = 1'000'000;

class Snapshot {
 public:
  // Links are usable when admin-up, not drained by an intent (link, either end
  // node, either end facility), and measured up or degraded. A link's cost is
  // its measured one-way latency (RTT / 2) when measured, else its inventory latency.
  static Snapshot Build(const ModelView& model);

  int facility_count() const { return static_cast<int>(facilities_.size()); }
  const v1::Facility& facility(int index) const { return facilities_[index]; }
  // -1 when unknown.
  int FacilityIndex(const std::string& id) const;

  const std::vector<v1::Link>& links() const { return links_; }
  const std::vector<Arc>& out_arcs(int facility) const { return out_arcs_[facility]; }
  size_t usable_link_count() const { return usable_links_; }

 private:
  std::vector<v1::Facility> facilities_;
  std::unordered_map<std::string, int> facility_index_;
  std::vector<v1::Link> links_;
  std::vector<std::vector<Arc>> out_arcs_;
  size_t usable_links_ = 0;
};

}  // namespace geodesic::pathcomp
