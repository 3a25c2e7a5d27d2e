#include "sim/drill/drill_generator.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace geodesic::sim {
namespace {

// 0..n-1 from the raw generator (distributions are implementation-defined).
uint64_t Below(std::mt19937_64& rng, uint64_t n) { return n == 0 ? 0 : rng() % n; }

// An index drawn with probability proportional to `weights` (not all zero).
size_t Weighted(std::mt19937_64& rng, const std::vector<double>& cumulative) {
  const double total = cumulative.back();
  const double x = static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0) * total;
  return std::min<size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), x) - cumulative.begin(),
                          cumulative.size() - 1);
}

}  // namespace

void ScaleDemands(double scale, topology::Topology& topology) {
  for (auto& workload : topology.workloads) {
    if (workload.has_elephant()) {
      workload.mutable_elephant()->set_demand_gbps(workload.elephant().demand_gbps() * scale);
    }
  }
}

void AddGravityFlows(const GravityFlows& gravity, uint64_t seed, topology::Topology& topology) {
  std::vector<const v1::Facility*> ends;
  std::map<std::string, double> capacity;
  for (const auto& link : topology.links) capacity[link.src_facility_id()] += link.capacity_gbps();
  std::vector<double> cumulative;
  for (const auto& facility : topology.facilities) {
    if (facility.prefixes().empty() || capacity[facility.id()] <= 0) continue;
    ends.push_back(&facility);
    cumulative.push_back((cumulative.empty() ? 0 : cumulative.back()) + capacity[facility.id()]);
  }
  if (ends.size() < 2 || gravity.flows == 0) return;
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  struct Pair {
    size_t src, dst;
    double weight;
  };
  std::vector<Pair> pairs;
  double total_weight = 0;
  while (pairs.size() < gravity.flows) {
    const size_t src = Weighted(rng, cumulative), dst = Weighted(rng, cumulative);
    if (src == dst) continue;
    const double weight = capacity[ends[src]->id()] * capacity[ends[dst]->id()];
    pairs.push_back({src, dst, weight});
    total_weight += weight;
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    v1::Workload& workload = topology.workloads.emplace_back();
    workload.set_id(absl::StrCat("grav-", i + 1));
    v1::ElephantFlow& flow = *workload.mutable_elephant();
    flow.set_src_facility_id(ends[pairs[i].src]->id());
    flow.set_dst_prefix(ends[pairs[i].dst]->prefixes(0));
    flow.set_demand_gbps(gravity.total_gbps * pairs[i].weight / total_weight);
    flow.set_priority(static_cast<uint32_t>(Below(rng, 4)));
  }
}

void AddChains(const GeneratedChains& chains, uint64_t seed, topology::Topology& topology) {
  const size_t n = topology.facilities.size();
  if (n == 0 || chains.services == 0 || chains.count == 0) return;
  std::mt19937_64 rng(seed ^ 0xc2b2ae3d27d4eb4fULL);
  const size_t first_service = topology.services.size();
  for (uint32_t s = 0; s < chains.services; ++s) {
    v1::Service& service = topology.services.emplace_back();
    service.set_id(absl::StrCat("svc-", s + 1));
    service.set_service_time_us(chains.service_time_us);
    std::vector<size_t> facilities(n);
    for (size_t i = 0; i < n; ++i) facilities[i] = i;
    for (size_t i = 0; i < std::min<size_t>(chains.replicas, n); ++i) {  // partial Fisher-Yates
      std::swap(facilities[i], facilities[i + Below(rng, n - i)]);
      service.add_replica_facility_ids(topology.facilities[facilities[i]].id());
    }
  }
  for (uint32_t c = 0; c < chains.count; ++c) {
    v1::Workload& workload = topology.workloads.emplace_back();
    workload.set_id(absl::StrCat("chain-", c + 1));
    v1::AgentChain& chain = *workload.mutable_chain();
    chain.set_origin_facility_id(topology.facilities[Below(rng, n)].id());
    const uint64_t hops = chains.min_hops + Below(rng, chains.max_hops - chains.min_hops + 1);
    for (uint64_t h = 0; h < hops; ++h) {
      chain.add_service_ids(topology.services[first_service + Below(rng, chains.services)].id());
    }
    chain.set_latency_budget_us(chains.budget_us);
  }
}

void AddFabrics(const GeneratedFabrics& fabrics, topology::Topology& topology) {
  constexpr uint32_t kServersPerRail = 32;
  constexpr double kPortGbps = 400;
  std::map<std::string, double> capacity;
  for (const auto& link : topology.links) capacity[link.src_facility_id()] += link.capacity_gbps();
  std::set<std::string> have;
  for (const auto& fabric : topology.fabrics) have.insert(fabric.facility_id());
  for (const auto& facility : topology.facilities) {
    if (have.count(facility.id())) continue;
    v1::Fabric& fabric = topology.fabrics.emplace_back();
    fabric.set_facility_id(facility.id());
    fabric.set_planes(fabrics.planes);
    fabric.set_rails(fabrics.rails);
    fabric.set_gpus(fabrics.rails * kServersPerRail);
    fabric.set_nic_speed_gbps(kPortGbps);
    fabric.set_backbone_uplink_gbps(fabrics.uplink_gbps > 0 ? fabrics.uplink_gbps : capacity[facility.id()]);
    v1::FabricLayer& leaf = *fabric.add_layers();
    leaf.set_name("leaf");
    leaf.set_switch_count(fabrics.rails);
    leaf.set_downlink_ports(kServersPerRail);
    leaf.set_uplink_ports(kServersPerRail);
    leaf.set_port_speed_gbps(kPortGbps);
    v1::FabricLayer& spine = *fabric.add_layers();
    spine.set_name("spine");
    spine.set_switch_count(kServersPerRail / 2);
    spine.set_downlink_ports(2 * fabrics.rails);
    spine.set_port_speed_gbps(kPortGbps);
  }
}

}  // namespace geodesic::sim
