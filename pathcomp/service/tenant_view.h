#pragma once
// What the telemetry relay (relay.proto) may show one caller: which workloads
// it covers (RelayScope), and each covered workload's current paths hop by hop
// from a plan and the links' current measurements (BuildTenantView).
//
// The confidentiality rule lives here: a view holds the caller's workloads
// only, and of the links only those their current paths use, with nothing of
// other traffic (no utilization, no load). An id the caller may not see is
// answered exactly as an id that does not exist.
//
// Pure: no I/O, no gRPC, no clock, no threads. Thread-compatible.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/model.pb.h"
#include "geodesic/v1/plan.pb.h"
#include "geodesic/v1/relay.pb.h"
#include "tls/identity.h"

namespace geodesic::pathcomp {

// At most this many ids in RelayWatchRequest.workload_ids.
inline constexpr int kMaxRelayWorkloadIds = 1000;

// The workloads one watch covers.
struct RelayScope {
  bool operator_view = false;  // an operator: plan reasons are shown verbatim
  bool all_tenants = false;    // every workload, the operators' own included
  std::string tenant{};        // otherwise: only the workloads of this tenant
  std::set<std::string> workload_ids{};  // empty: all of the above

  // True when `workload` is one this watch covers.
  bool Covers(const v1::Workload& workload) const;
};

// Who may watch what (relay.proto): a tenant its own workloads (request.tenant
// empty or its own name), an operator of any role every workload or those of
// request.tenant. PermissionDenied for any other identity or for a tenant
// naming another tenant; InvalidArgument for a malformed request (more than
// kMaxRelayWorkloadIds ids, a bad or repeated id, a bad tenant id).
[[nodiscard]] absl::StatusOr<RelayScope> ScopeFor(const tls::Identity& caller,
                                                  const v1::RelayWatchRequest& request);

// NotFound "unknown workload ID" for the first requested id that `workloads`
// does not hold or that `scope` does not cover: the same words either way, so
// a tenant cannot learn which ids other tenants use.
[[nodiscard]] absl::Status CheckRequestedWorkloads(const RelayScope& scope,
                                                   const std::vector<v1::Workload>& workloads);

// Every covered workload's state, by id, from `plan` (null: no plan yet) and
// `links` (with their health; a drained link with ADMIN_STATE_DRAINED, as
// ListLinks shows it).
//
// An elephant flow has one path per next hop its source's route for its
// destination prefix has, each followed through the primary next hop of every
// site after it; its planned latency is the route's, its measured latency the
// slowest path's. A chain has one call per hop of its primary assignment; the
// plan names facilities, so between two facilities the hop is the usable link
// with the least one-way latency (the solver's own choice; ties by id).
// Hop latency: half the measured RTT, else the inventory's latency_us.
std::map<std::string, v1::RelayWorkload> BuildTenantView(const RelayScope& scope, const v1::Plan* plan,
                                                         const std::vector<v1::Link>& links,
                                                         const std::vector<v1::Workload>& workloads);

// The ids of the links `workload`'s paths use.
std::set<std::string> LinksOf(const v1::RelayWorkload& workload);

// Two states with the same paths (facilities, links, weights, replicas,
// routed or not): measurements aside, nothing was rerouted.
bool SameRoute(const v1::RelayWorkload& a, const v1::RelayWorkload& b);

}  // namespace geodesic::pathcomp
