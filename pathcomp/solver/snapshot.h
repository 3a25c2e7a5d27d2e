#pragma once
// A compact, immutable graph of the backbone for one solve: facilities and
// links as dense indices (sorted by id), adjacency in one flat array, per-link
// state in a small struct, elephant demands as index triples. Versions share
// everything that does not change with health: WithLinkHealth() copies only
// the per-link state, so an update costs O(links) small copies instead of a
// rebuild from the model.
// Pure: no I/O, no clock, no threads. Immutable once built; safe to read from
// several threads.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/model.pb.h"

namespace geodesic::pathcomp {

// What a snapshot is built from: the model's entities as they are now.
struct ModelView {
  std::vector<v1::Facility> facilities;
  std::vector<v1::Node> nodes;
  std::vector<v1::Link> links;
  std::vector<v1::Intent> intents;
  std::vector<v1::Workload> workloads;
  std::vector<v1::Service> services;
  std::vector<v1::Fabric> fabrics;
};

// Degraded links are kept but cost this much more, so they carry traffic only
// when no healthy path exists.
inline constexpr uint64_t kDegradedPenaltyUs = 1'000'000;

struct LinkState {
  uint64_t cost_us = 0;  // measured RTT / 2 when measured, else inventory latency (+ penalty)
  v1::OperState oper = v1::OPER_STATE_UNKNOWN;
  bool drained = false;  // admin down or drained by an intent
  bool usable = false;   // !drained && oper is up or degraded
};

struct Demand {
  int src;  // facility index
  int dst;  // facility index (owner of the dst prefix)
  double gbps;
  uint32_t priority;
  int workload;  // index into workload_ids()
};

struct ServiceReplicas {
  std::vector<int> facilities;  // facility indices, ascending
  uint64_t service_time_us = 0;
};

struct Chain {
  int origin;                 // facility index
  std::vector<int> services;  // service indices, in call order
  uint64_t budget_us;
  int workload;  // index into workload_ids()
  // A pin intent: the replica facility of every call (empty: any), or the
  // facilities the chain may use at all, as a mask by facility index (empty: all).
  std::vector<int> pinned_replicas = {};
  std::vector<char> allowed = {};
};

class Snapshot {
 public:
  // Links are usable when not admin-drained, not drained by an intent (link, either end
  // node, either end facility), and measured up or degraded. A metric-override
  // intent scales its link's path cost; a pin intent restricts its chain. Elephant flows
  // whose prefix no facility announces, and chains that call an unknown
  // service, are left out. A service keeps only its replicas in known
  // facilities (possibly none: chains calling it cannot be placed).
  static Snapshot Build(const ModelView& model);

  // This snapshot with the given links' health replaced. NotFound for an
  // unknown link id; nothing changes then.
  [[nodiscard]] absl::StatusOr<Snapshot> WithLinkHealth(
      const std::vector<std::pair<std::string, v1::LinkHealth>>& health) const;

  // True when both are versions of one build (WithLinkHealth of each other):
  // same facilities, links, services, chains and demands; only health may differ.
  bool SharesInventory(const Snapshot& other) const { return shared_ == other.shared_; }

  int facility_count() const { return static_cast<int>(shared_->facility_ids.size()); }
  const std::string& facility_id(int facility) const { return shared_->facility_ids[facility]; }
  const std::vector<std::string>& facility_prefixes(int facility) const {
    return shared_->facility_prefixes[facility];
  }
  int FacilityIndex(const std::string& id) const;  // -1 when unknown
  // What the facility's DC fabric can exchange with the backbone now (its
  // backbone uplink, less what failed or drained planes and rails take away),
  // in Gbps; negative when the facility has no fabric in the model (no limit).
  double facility_exchange_gbps(int facility) const {
    return shared_->facility_exchange_gbps[facility];
  }

  int link_count() const { return static_cast<int>(shared_->link_ids.size()); }
  const std::string& link_id(int link) const { return shared_->link_ids[link]; }
  int LinkIndex(const std::string& id) const;  // -1 when unknown
  int link_src(int link) const { return shared_->link_src[link]; }
  int link_dst(int link) const { return shared_->link_dst[link]; }
  const std::string& link_dst_node(int link) const { return shared_->link_dst_node[link]; }
  double link_capacity_gbps(int link) const { return shared_->link_capacity_gbps[link]; }
  uint32_t link_metric(int link) const { return shared_->link_metric[link]; }
  // A metric override's factor on the link's path cost (override / inventory
  // metric); 1 without one.
  double link_cost_scale(int link) const { return shared_->link_cost_scale[link]; }
  // SRLG indices of the link; names via srlg_name().
  std::span<const int> link_srlgs(int link) const { return shared_->link_srlgs[link]; }
  int SrlgIndex(const std::string& name) const;  // -1 when unknown
  const std::string& srlg_name(int srlg) const { return shared_->srlg_names[srlg]; }
  const LinkState& link_state(int link) const { return (*states_)[link]; }

  // Every link leaving `facility` (usable or not), by link index.
  std::span<const int> out_links(int facility) const {
    const auto& s = *shared_;
    return {s.out_links.data() + s.out_offsets[facility],
            s.out_links.data() + s.out_offsets[facility + 1]};
  }
  size_t usable_link_count() const { return usable_links_; }
  const std::vector<Demand>& demands() const { return shared_->demands; }
  const std::vector<Chain>& chains() const { return shared_->chains; }
  int service_count() const { return static_cast<int>(shared_->service_ids.size()); }
  const std::string& service_id(int service) const { return shared_->service_ids[service]; }
  const ServiceReplicas& service(int service) const { return shared_->services[service]; }
  // Ids of the workloads behind demands() and chains().
  const std::string& workload_id(int workload) const { return shared_->workload_ids[workload]; }

 private:
  // What health never changes.
  struct Shared {
    std::vector<std::string> facility_ids;
    std::unordered_map<std::string, int> facility_index;
    std::vector<std::vector<std::string>> facility_prefixes;
    std::vector<double> facility_exchange_gbps;
    std::vector<std::string> link_ids;
    std::unordered_map<std::string, int> link_index;
    std::vector<int> link_src, link_dst;
    std::vector<std::string> link_dst_node;
    std::vector<double> link_capacity_gbps;
    std::vector<uint32_t> link_metric;
    std::vector<double> link_cost_scale;
    std::vector<uint64_t> link_latency_us;
    std::vector<std::vector<int>> link_srlgs;
    std::vector<std::string> srlg_names;
    std::unordered_map<std::string, int> srlg_index;
    std::vector<int> out_offsets;  // facility_count + 1
    std::vector<int> out_links;
    std::vector<Demand> demands;
    std::vector<std::string> service_ids;  // ascending
    std::vector<ServiceReplicas> services;
    std::vector<Chain> chains;
    std::vector<std::string> workload_ids;
  };

  static LinkState StateFor(uint64_t latency_us, double cost_scale, bool drained, const v1::LinkHealth& health);

  std::shared_ptr<const Shared> shared_;
  std::shared_ptr<const std::vector<LinkState>> states_;
  size_t usable_links_ = 0;
};

}  // namespace geodesic::pathcomp
