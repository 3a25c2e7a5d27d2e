#pragma once
// Turns an elephant-flow allocation into what routers can forward: for every
// destination facility a loop-free flow (a DAG), and for every facility and
// destination the weighted next hops (WCMP) that split traffic the way the
// allocation does.
//
// Construction, per destination d:
//  1. Sum the allocation's path flows of every commodity toward d per link.
//  2. Cancel cycles: while the links with flow toward d contain a directed
//     cycle, subtract the cycle's smallest flow from each of its links. This
//     never raises a link's load and keeps every commodity's delivery (the
//     flow toward d stays conserved at every facility but its sources and d).
//     Flows below a noise floor (1e-9 of the largest carried demand) are
//     dropped, and so is flow into a facility left with no flow out of it.
//  3. A facility with flow toward d splits over its links in proportion to
//     their flow: integer weights by largest remainder to sum to
//     WcmpConfig::weight_resolution (R), then every link with flow gets at
//     least 1. A facility with no flow toward d that can reach d uses its
//     lowest-latency next hops with equal weights (the same next hops
//     PathSolver picks without an allocation).
//
// Loop freedom: links with flow toward d form a DAG (step 2) and lead only to
// d or to facilities that themselves have flow toward d, so a packet that
// enters the DAG stays in it until d. Outside the DAG every next hop lies on
// a lowest-latency path, so it strictly lowers the latency left to d (link
// costs are >= 1 us). A walk therefore never revisits a facility.
//
// Rounding: at a facility v with flow F_v toward d over k_v links, the
// weighted shares differ from the exact shares by eps_v = sum |r_a - s_a| <=
// 2 k_v / R in total. Forwarding splits at each facility like a random walk,
// which never amplifies an error, so the forwarded load on a link a out of u
// differs from the loop-free flow by at most the sum of F_v * eps_v over u
// and the facilities upstream of u in the DAG, summed over destinations:
// Wcmp::rounding_bound_gbps holds that bound per link.
//
// Pure: no I/O, no clock, no threads. Plain values; thread-compatible.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pathcomp/solver/mcf_solver.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {

struct WcmpConfig {
  // What the weights of a facility that follows the allocation add up to
  // (each link with flow gets at least 1, so up to R + next hops). Larger is
  // closer to the allocation; routers may quantize further.
  uint32_t weight_resolution = 1000;
};

struct WeightedNextHop {
  int link = -1;  // snapshot link index
  uint32_t weight = 0;
};

// The next hops of one facility toward one destination facility.
struct WcmpRoute {
  std::vector<WeightedNextHop> next_hops;  // by link index; empty: no route (unreachable, or itself)
  // True: weights follow the allocation's flow toward the destination.
  // False: the lowest-latency next hops, equal weights.
  bool follows_allocation = false;
};

struct Wcmp {
  int facility_count = 0;
  int link_count = 0;
  uint32_t weight_resolution = 0;
  // routes[dst][facility].
  std::vector<std::vector<WcmpRoute>> routes;
  // flow_gbps[dst][link]: the loop-free flow toward dst the weights follow.
  std::vector<std::vector<double>> flow_gbps;
  // Per link: the loop-free flow over every destination; never above the
  // allocation's arc_load_gbps.
  std::vector<double> arc_load_gbps;
  // Per link: how far forwarding over the rounded weights may put its load
  // from arc_load_gbps (see the file comment), in Gbps.
  std::vector<double> rounding_bound_gbps;
  // What cycle cancelling took away: cycles cancelled and Gbps removed
  // summed over links (0 when the allocation had no cycle toward any destination).
  int cancelled_cycles = 0;
  double cancelled_gbps = 0;

  const WcmpRoute& route(int facility, int dst) const { return routes[dst][facility]; }
};

// Builds the WCMP of `allocation`, which must come from
// McfProblemFromSnapshot(snapshot) (commodities = snapshot demands, arcs =
// snapshot links, by index). InvalidArgument when it does not fit: sizes,
// a path that is not a walk over usable links from its demand's source to
// its destination, a negative or non-finite flow, or a resolution of 0.
[[nodiscard]] absl::StatusOr<Wcmp> BuildWcmp(const Snapshot& snapshot, const McfAllocation& allocation,
                                             const WcmpConfig& config = {});

// What forwarding every commodity's carried Gbps from its source over the
// weights (each facility splits what reaches it in proportion to weight)
// does to the links.
struct ForwardingCheck {
  // Empty when forwarding toward every destination is loop-free; otherwise
  // the first loop found, as "toward <dst>: <f1> -> <f2> -> ... -> <f1>".
  std::string loop;
  // Traffic that reached a facility with no next hops before its destination.
  double undelivered_gbps = 0;
  // Per link, what forwarding puts on it.
  std::vector<double> arc_load_gbps;
  // Against Wcmp::arc_load_gbps: the largest |difference| and its link, the
  // largest |difference| / load over links loaded above tolerance_gbps, and the largest
  // amount by which a difference exceeds the link's rounding bound (<= 0
  // when every link is within its bound, up to float noise).
  double max_abs_diff_gbps = 0;
  int worst_link = -1;
  double max_rel_diff = 0;
  double max_excess_over_bound_gbps = 0;
  // Forwarded load / capacity, over links with capacity.
  double max_utilization = 0;
  // Loop-free, everything delivered, every link within its bound (plus
  // `tolerance_gbps` for float noise).
  bool ok = false;
  double tolerance_gbps = 0;
};

// Forwards `allocation`'s carried Gbps over `wcmp`'s next hops (both from
// `snapshot`). Sizes must match (as BuildWcmp checks); a commodity that
// carried nothing is skipped.
ForwardingCheck CheckWcmpForwarding(const Snapshot& snapshot, const Wcmp& wcmp, const McfAllocation& allocation);

}  // namespace geodesic::pathcomp
