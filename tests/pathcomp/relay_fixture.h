#pragma once
// A small backbone, a plan for it and two tenants' workloads, built by hand
// for the relay's pure tests (tenant_view_test, relay_diff_test).
//
//   a --l-ab--> b --l-bd--> d      acme: elephant acme-flow a -> 10.4.0.0/16 (d),
//   a --l-ac--> c --l-cd--> d            next hops l-ab (weight 3) and l-ac (1)
//   b --l-ba--> a                  beta: chain beta-chain from a calling svc at b
//   c --l-ce--> e                        (there l-ab, back l-ba, only beta uses l-ba),
//                                        elephant beta-flow c -> 10.5.0.0/16 (e)
//                                  ops:  elephant ops-flow b -> 10.4.0.0/16 (no tenant)
#include <string>
#include <vector>

#include "geodesic/v1/model.pb.h"
#include "geodesic/v1/plan.pb.h"
#include "site_plan/chain_paths.h"
#include "site_plan/site_plan_writer.h"

namespace geodesic::pathcomp::relay_testing {

inline v1::Link MakeLink(const std::string& id, const std::string& from, const std::string& to,
                         uint64_t latency_us, uint64_t rtt_us = 0, double loss = 0) {
  v1::Link link;
  link.set_id(id);
  link.set_src_facility_id(from);
  link.set_dst_facility_id(to);
  link.set_latency_us(latency_us);
  link.set_admin_state(v1::ADMIN_STATE_UP);
  link.mutable_health()->set_state(v1::OPER_STATE_UP);
  link.mutable_health()->set_rtt_us(rtt_us);
  link.mutable_health()->set_loss_ratio(loss);
  return link;
}

inline std::vector<v1::Link> Links() {
  return {MakeLink("l-ab", "a", "b", 1000, 3000, 0.01), MakeLink("l-bd", "b", "d", 2000),
          MakeLink("l-ac", "a", "c", 1500, 2000), MakeLink("l-cd", "c", "d", 1500),
          MakeLink("l-ba", "b", "a", 1000, 2600),  MakeLink("l-ce", "c", "e", 700)};
}

inline v1::Workload Elephant(const std::string& id, const std::string& tenant, const std::string& src,
                             const std::string& prefix) {
  v1::Workload workload;
  workload.set_id(id);
  workload.set_tenant(tenant);
  workload.mutable_elephant()->set_src_facility_id(src);
  workload.mutable_elephant()->set_dst_prefix(prefix);
  workload.mutable_elephant()->set_demand_gbps(10);
  return workload;
}

inline std::vector<v1::Workload> Workloads() {
  v1::Workload chain;
  chain.set_id("beta-chain");
  chain.set_tenant("beta");
  chain.mutable_chain()->set_origin_facility_id("a");
  chain.mutable_chain()->add_service_ids("svc");
  chain.mutable_chain()->set_latency_budget_us(10'000);
  return {Elephant("acme-flow", "acme", "a", "10.4.0.0/16"), chain,
          Elephant("beta-flow", "beta", "c", "10.5.0.0/16"), Elephant("ops-flow", "", "b", "10.4.0.0/16")};
}

inline v1::NextHop Next(const std::string& link, const std::string& peer, uint32_t weight) {
  v1::NextHop next;
  next.set_link_id(link);
  next.set_peer_facility_id(peer);
  next.set_weight(weight);
  return next;
}

inline v1::Route& AddRoute(v1::Plan& plan, const std::string& site, const std::string& prefix,
                           const std::string& destination, std::vector<v1::NextHop> next_hops,
                           std::vector<std::string> path, uint64_t latency_us) {
  v1::SitePlan* site_plan = nullptr;
  for (v1::SitePlan& existing : *plan.mutable_sites()) {
    if (existing.facility_id() == site) site_plan = &existing;
  }
  if (site_plan == nullptr) {
    site_plan = plan.add_sites();
    site_plan->set_facility_id(site);
  }
  return site_plan::SitePlanWriter(site_plan).AddRoute(prefix, destination, next_hops, path, latency_us);
}

// Generation 1: everything up. With `ab_down`, generation 2 after l-ab went
// down: acme-flow leaves only over l-ac, and the plan's reason names what
// acme must not see.
inline v1::Plan MakePlan(bool ab_down = false) {
  v1::Plan plan;
  plan.set_generation(ab_down ? 2 : 1);
  plan.set_reason(ab_down ? "link l-ab down; workload beta-chain added by alice" : "pathcomp started");
  if (ab_down) {
    AddRoute(plan, "a", "10.4.0.0/16", "d", {Next("l-ac", "c", 1)}, {"a", "c", "d"}, 3000);
  } else {
    AddRoute(plan, "a", "10.4.0.0/16", "d", {Next("l-ab", "b", 3), Next("l-ac", "c", 1)}, {"a", "b", "d"}, 3000);
  }
  AddRoute(plan, "b", "10.4.0.0/16", "d", {Next("l-bd", "d", 1)}, {"b", "d"}, 2000);
  AddRoute(plan, "c", "10.4.0.0/16", "d", {Next("l-cd", "d", 1)}, {"c", "d"}, 1500);
  AddRoute(plan, "c", "10.5.0.0/16", "e", {Next("l-ce", "e", 1)}, {"c", "e"}, 700);
  v1::ChainPlan& chain = *plan.add_chains();
  chain.set_workload_id("beta-chain");
  chain.set_latency_budget_us(10'000);
  chain.mutable_primary()->set_placed(true);
  chain.mutable_primary()->set_total_latency_us(5000);
  chain.mutable_primary()->set_within_budget(true);
  v1::ChainHop& hop = *chain.mutable_primary()->add_hops();
  hop.set_service_id("svc");
  hop.set_replica_facility_id("b");
  hop.set_path_there(site_plan::AddChainPath(chain, {"a", "b"}));
  hop.set_path_back(site_plan::AddChainPath(chain, {"b", "a"}));
  hop.set_network_rtt_us(2000);
  hop.set_service_time_us(3000);
  v1::FacilityDependency& dependency = *plan.add_single_facility_dependencies();
  dependency.set_workload_id("beta-chain");
  dependency.set_facility_id("b");
  dependency.set_reason("service svc has one replica, in b");
  return plan;
}

}  // namespace geodesic::pathcomp::relay_testing
