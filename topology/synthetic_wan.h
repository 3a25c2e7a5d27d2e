#pragma once
// A generated WAN backbone for tests and benchmarks at sizes no public
// dataset has (hundreds to thousands of facilities), seeded and deterministic:
// the same options give the same topology on every machine (the generator
// draws from std::mt19937_64 directly, whose sequence the standard fixes, and
// uses no implementation-defined distribution).
//
// What it makes (ids in quotes):
// - facilities "<continent>-<nnnn>" (na, sa, eu, af, as, oc), spread over the
//   continents in proportion to how much backbone each carries (North America
//   and Europe most), clustered around metro centres; one backbone router
//   "<facility>-r" each; facility i announces 10.<i / 256>.<i % 256>.0/24.
// - links: within each continent a minimum spanning tree by great-circle
//   distance (every continent connected), then links to near neighbours until
//   the network's mean degree (undirected links per facility) is
//   `mean_degree`; `long_haul_links` longer links inside continents; a few
//   submarine cables between continents (at least one per continent pair
//   that has cables in the real world: the network is connected). Every
//   undirected link is two directed links "<a>-<b>" and "<b>-<a>" with the
//   same capacity (100-800 Gbps in steps of 100; cables and long-haul links
//   400-800), latency FiberLatencyUs of the great circle, IGP metric that
//   latency in whole ms (at least 1).
// - SRLGs: a `parallel_fraction` of the links get a second, parallel circuit
//   "<a>-<b>-p" in the same duct (SRLG "duct-<a>-<b>", on both); at every
//   facility, the two links leaving it closest in bearing, when within 10
//   degrees, run in one conduit (SRLG "conduit-<facility>"), and so do their
//   parallel circuits. Every SRLG is shared by at least two undirected links.
// - elephant flows "flow-<n>": a gravity matrix, `elephant_flows` distinct
//   ordered facility pairs drawn (without replacement) with probability
//   proportional to mass(src) x mass(dst), each facility's mass drawn
//   heavy-tailed; demand_gbps = total_demand_gbps shared in that proportion;
//   priority 0.
// - services "svc-<n>" with `replicas` distinct facilities each (drawn by
//   mass), service time `service_time_us`; chains "chain-<n>" from a facility
//   drawn by mass, calling min_hops..max_hops services, budget `budget_us`.
// Pure: no I/O, no clock. Thread-compatible.
#include <cstdint>

#include "absl/status/statusor.h"
#include "topology/inventory.h"

namespace geodesic::topology {

struct SyntheticWanOptions {
  uint64_t seed = 1;
  uint32_t facilities = 200;        // 8 .. 4096
  double mean_degree = 3.5;         // undirected links per facility, 2.2 .. 8
  uint32_t long_haul_links = 0;     // extra long links inside continents; 0: facilities / 50
  double parallel_fraction = 0.05;  // links with a parallel circuit, 0 .. 1
  uint32_t elephant_flows = 0;      // distinct ordered pairs, at most facilities x (facilities - 1) / 2
  double total_demand_gbps = 0;     // shared by the flows; 0: 0.25% of all directed link capacity
  uint32_t services = 0;            // 0: no services and no chains
  uint32_t replicas = 3;            // per service, 1 .. facilities
  uint32_t chains = 0;              // needs services > 0
  uint32_t min_hops = 3, max_hops = 6;  // calls per chain, 1 .. 64
  uint64_t service_time_us = 2000;
  uint64_t budget_us = 300'000;
};

// InvalidArgument listing every option out of range, one per line
// ("facilities: 3 is below 8").
[[nodiscard]] absl::StatusOr<Topology> GenerateSyntheticWan(const SyntheticWanOptions& options);

}  // namespace geodesic::topology
