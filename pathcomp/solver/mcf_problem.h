#pragma once
// The elephant-flow allocation problem: a splittable multi-commodity flow over
// a directed graph, solved class by class in priority order (0 first). What
// the solvers read (McfSolver, the exact edge LP reference) and nothing else:
// dense indices, Gbps, microseconds.
// Pure: no I/O, no clock, no threads. Plain values; thread-compatible.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {

// What an operator asks of one priority class.
enum class McfObjective {
  // Route every demand of the class; minimize the highest link utilization
  // (over every link, counting the load of the classes solved before it).
  kMinMaxUtilization,
  // Carry as much of the class's demand as the capacity left by the classes
  // before it allows. Fair first: every flow gets the largest common fraction
  // of its demand that fits (max-concurrent flow, capped at 1), then the total
  // carried is maximized with no flow below that fraction.
  kMaxFairThroughput,
  // Route every demand of the class over the lowest-latency paths that keep
  // every link at or below max(utilization_target, (1 + mlu_slack) x U*),
  // U* being the class's kMinMaxUtilization optimum: minimize the
  // demand-weighted path latency (sum of flow x link cost) under that cap.
  // Traffic takes the shortest paths while they have room and spreads only
  // as much as congestion forces.
  kMinLatency,
};

// The failures a protected class stays within capacity under, one at a
// time: every fiber (a link and its reverse), every SRLG, every facility.
enum class ProtectionKind { kNone, kLinks, kSrlgs, kFacilities };

// "none", "links", "srlgs", "facilities": the kind's name in configs and plans.
const char* ProtectionKindName(ProtectionKind kind);

// What an operator asks of one priority class: its objective and that
// objective's parameters.
struct McfClassPolicy {
  McfObjective objective = McfObjective::kMinMaxUtilization;
  // kMinLatency: the utilization every link may reach when the network has
  // room, and how far above the class's optimal MLU it may go when not.
  double utilization_target = 0.8;
  double mlu_slack = 0.01;
  // Protected (mlu and latency classes): after any single failure of this
  // kind, with the repair the routers really do (the plan's backups), no
  // link carries more than protection_limit x its capacity of this class
  // and the classes before it (pathcomp/solver/protection.h).
  ProtectionKind protection = ProtectionKind::kNone;
  double protection_limit = 1.0;
  friend bool operator==(const McfClassPolicy&, const McfClassPolicy&) = default;
};

// "mlu", "latency", "total-flow": the objective's name in configs, tectl
// and plans.
const char* ObjectiveName(McfObjective objective);

// Every class's policy: those listed by priority, the default for the rest.
struct McfClassPolicies {
  std::map<uint32_t, McfClassPolicy> by_priority;
  McfClassPolicy default_policy;

  const McfClassPolicy& Of(uint32_t priority) const {
    const auto it = by_priority.find(priority);
    return it == by_priority.end() ? default_policy : it->second;
  }
  friend bool operator==(const McfClassPolicies&, const McfClassPolicies&) = default;
};

// The utilization cap a kMinLatency class routes under, given its optimal
// MLU `optimum`: max(utilization_target, (1 + mlu_slack) x optimum).
double LatencyUtilizationCap(const McfClassPolicy& policy, double optimum);

// A directed link. Capacity <= 0 means unusable (down or drained): no flow
// may cross it. Indices stay stable across re-solves, so a failed link keeps
// its index with capacity 0.
struct McfArc {
  int src = 0;
  int dst = 0;
  double capacity_gbps = 0;
  double cost_us = 0;  // latency; among equally good routes the solvers prefer low cost
};

struct McfCommodity {
  int src = 0;
  int dst = 0;
  double demand_gbps = 0;
  uint32_t priority = 0;  // 0 = highest, solved first
};

// Protection: a linear model of the routers' local repair (taken from a
// plan, see pathcomp/solver/protection.h) and, per class, the loads that must
// hold after each failure. After failure f, a path keeps its flow up to its
// first down arc; from the arc's tail the flow is forwarded as that node's
// McfReroute toward the destination says (the routers' repair there: a
// weighted route's surviving next hops, or its backup), or, without one,
// along the lowest-cost path around the failure (dropped when there is
// none). Paths through a repairing node that avoid the down arcs keep
// theirs: a router that drops a failed member of its group spreads only that
// member's share over the others.
struct McfReroute {
  int node = 0;
  int dst = 0;
  // What one unit of traffic entering `node` toward `dst` puts on each arc
  // (loops counted once; traffic dropped loads nothing further).
  std::vector<std::pair<int, double>> arc_load;
};
struct McfFailure {
  std::string name;                  // "link iad-dfw", for reports
  std::vector<int> arcs;             // out of service
  std::vector<McfReroute> reroutes;  // at most one per (node, dst)
};
// After `failure`, what the class and the classes before it put on `arc`
// stays at or below limit_gbps.
struct McfFailureLimit {
  int failure = 0;
  int arc = 0;
  double limit_gbps = 0;
};
struct McfProtection {
  std::vector<McfFailure> failures;
  // Per priority class (kMinMaxUtilization or kMinLatency only): its rows.
  std::map<uint32_t, std::vector<McfFailureLimit>> limits;
  // Asked before every pricing round of a class with limits; true stops the
  // allocation where it is (McfSolveStats::stopped): its flows fit the
  // links, the limits perhaps not. The caller's clock or budget; empty: never.
  std::function<bool()> stop;
  bool empty() const { return limits.empty(); }
};

struct McfProblem {
  int node_count = 0;
  std::vector<McfArc> arcs;
  std::vector<McfCommodity> commodities;
  // What each node's DC fabric can send into / receive from the backbone, in
  // Gbps, indexed by node; empty = unlimited. Only kMaxFairThroughput classes
  // are limited by it: a kMinMaxUtilization class routes all its demand
  // whatever the fabric (routing cannot change what a facility sends).
  std::vector<double> node_send_gbps;
  std::vector<double> node_receive_gbps;
  // What each priority class optimizes.
  McfClassPolicies policies;
  // Loads each protected class must keep after failures; empty: none.
  McfProtection protection;

  const McfClassPolicy& PolicyOf(uint32_t priority) const { return policies.Of(priority); }
  McfObjective ObjectiveOf(uint32_t priority) const { return PolicyOf(priority).objective; }
};

// InvalidArgument naming the first problem: node index out of range, a
// self-loop arc or commodity, a negative or non-finite capacity, cost or
// demand, fabric limits whose size is neither 0 nor node_count, a class
// policy's utilization_target outside (0, 10], mlu_slack outside [0, 10] or
// protection_limit outside (0, 10], protection of a kMaxFairThroughput class,
// protection with an arc, node or failure out of range, a negative or
// non-finite load or limit, or limits for a kMaxFairThroughput class.
[[nodiscard]] absl::Status ValidateMcfProblem(const McfProblem& problem);

// One arc per snapshot link, same index (usable links keep their capacity,
// the others get 0, so a health change keeps indices), cost = the link's
// cost_us; one commodity per snapshot demand, same index. Nodes are the
// snapshot's facilities.
McfProblem McfProblemFromSnapshot(const Snapshot& snapshot);

}  // namespace geodesic::pathcomp
