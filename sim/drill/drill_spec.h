#pragma once
// A failure drill as a file says it (sim/drills/*.yaml): a backbone, the
// workloads on it, a timeline of failures on a simulated clock, how fast the
// system detects and reacts, and expectations that must hold.
//
//   name: backbone-link-cut                  # an id
//   description: "..."
//   topology: ../../deploy/examples/backbone.yaml   # any import format; relative to the drill file
//   synthetic_wan:                           # instead of topology: a generated backbone
//     {facilities: 60, seed: 1, mean_degree: 3.5, long_haul_links: 0, parallel_fraction: 0.05,
//      elephant_flows: 0, total_demand_gbps: 0}   # see topology/synthetic_wan.h; defaults shown
//                                                 # but facilities (8..4096), which is required
//   generate:                                # optional, seeded: added to the topology's own workloads
//     seed: 7
//     demand_scale: 1.0                      # the file's elephant demands times this
//     gravity: {flows: 40, total_gbps: 800}  # elephant flows between facilities, gravity model
//     chains: {count: 30, services: 6, replicas: 2, min_hops: 3, max_hops: 5,
//              service_time_us: 2000, budget_ms: 120}
//     fabrics: {planes: 4, rails: 8, uplink_gbps: 3200}  # for facilities without one
//   reaction:                                # optional; the defaults shown
//     {probe_interval_ms: 10, detect_multiplier: 3, gray_detect_ms: 1000, local_repair_ms: 25,
//      debounce_ms: 50, solve_ms: 200, failover_ms: 2500}
//   auto_drain:                              # optional: the controller's automatic drainer, on
//     {enabled: true, hold_s: 30, undrain_hold_s: 300, max_active: 2,   # by default as in pathcomp,
//      max_per_hour: 4, fail_open_links: 4, fail_open_window_s: 60,     # with pathcomp's defaults
//      retry_refused_s: 300, utilization_limit: 1.0}                   # (the keys of its auto_drain:)
//   duration_s: 120
//   timeline:
//     - {at_s: 10, fail: link, id: iad-nyc}  # fail: link|srlg|node|facility|plane|partition
//     - {at_s: 10, fail: plane, id: sjc, plane: 2}
//     - {at_s: 20, degrade: link, id: nyc-lon, loss: 0.2, added_latency_ms: 30}   # gray failure
//     - {at_s: 30, drain: facility, id: den} # drain: link|node|facility
//     - {at_s: 40, leader_loss: true}        # the controller leader dies; a new one after failover_ms
//     - {at_s: 60, restore: link, id: iad-nyc}   # ends a fail, degrade or drain of the same target
//   expect:                                  # each optional
//     max_chain_outage_ms: 100   # no chain (whose origin survives) is cut off longer
//     min_carried_ratio: 0.9     # carried / demand at every moment, before repairs too
//     min_settled_carried_ratio: 0.95   # ... once re-planned (every plan)
//     max_mlu: 1.0               # of every plan
//     max_budget_violations: 0   # chains over their latency budget in any plan
//     max_cut_workloads: 0       # workloads no plan can place any more
//     no_new_single_facility_dependencies: true
//     # judged by --netns only, from the packets of its traffic streams
//     max_packet_loss_ms: 50     # no stream loses a longer run of packets at any event
//     min_delivered_ratio: 0.99  # received / sent over every stream and the whole drill
//     # judged by the simulator only (--live and --netns name them not judged)
//     min_auto_drains: 1         # automatic drains taken (pre-check passed, intents stored)
//     max_auto_drains: 1
//     min_auto_drain_refusals: 1 # automatic drains the pre-check refused (each alerted)
//     fail_open: true            # the drainer failed open at some moment (true), or never (false)
//     max_gray_link_load_gbps: 0 # once an automatic drain of a degraded link is in force and
//                                # re-planned: the planned elephant load on any degraded link,
//                                # in every such plan, at most this (0: traffic moved off);
//                                # fails when no such plan was made
//     max_utilization_after_repair: 1.0  # every elephant flow's demand forwarded hop by hop
//                                # through the sites' routes as routerd repairs them locally
//                                # (before the next plan): no link's load / capacity above
//                                # this at any local repair; in (0, 100]
//
// Pure: reading the file aside, no I/O, no clock.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/plan.pb.h"
#include "pathcomp/health/auto_drain_policy.h"
#include "pathcomp/solver/mcf_problem.h"
#include "topology/inventory.h"

namespace geodesic::sim {

struct ReactionModel {
  uint32_t probe_interval_ms = 10;
  uint32_t detect_multiplier = 3;
  uint32_t gray_detect_ms = 1000;  // loss/latency is judged over a window
  uint32_t local_repair_ms = 25;   // routerd switching to backups (bench_bgp)
  uint32_t debounce_ms = 50;
  uint32_t solve_ms = 200;
  uint32_t failover_ms = 2500;  // leader lost -> a new leader publishes (bench_failover)
  uint64_t hard_detect_ms() const { return uint64_t{probe_interval_ms} * detect_multiplier; }
};

struct TimelineEvent {
  enum class Action { kFail, kDegrade, kDrain, kRestore, kLeaderLoss };
  uint64_t at_ms = 0;
  Action action = Action::kFail;
  std::string kind;  // link, srlg, node, facility, plane, partition ("" for leader loss)
  std::string id;    // for a plane: its facility
  uint32_t plane = 0;
  double loss = 0;               // degrade
  uint64_t added_latency_us = 0; // degrade
  std::string Describe() const;  // "fail link iad-nyc", "leader loss", ...
  // What the event names as a failure scope (a partition as its facility:
  // the same links go down; the caller keeps its replicas).
  v1::FailureScope Scope() const;
};

struct Expectations {
  std::optional<uint64_t> max_chain_outage_ms;
  std::optional<double> min_carried_ratio;
  std::optional<double> min_settled_carried_ratio;
  std::optional<double> max_mlu;
  std::optional<uint64_t> max_budget_violations;
  std::optional<uint64_t> max_cut_workloads;
  bool no_new_single_facility_dependencies = false;
  std::optional<double> max_packet_loss_ms;   // netns
  std::optional<double> min_delivered_ratio;  // netns
  std::optional<uint64_t> min_auto_drains;          // simulator
  std::optional<uint64_t> max_auto_drains;          // simulator
  std::optional<uint64_t> min_auto_drain_refusals;  // simulator
  std::optional<bool> fail_open;                    // simulator
  std::optional<double> max_gray_link_load_gbps;    // simulator
  std::optional<double> max_utilization_after_repair;  // simulator
  bool packets() const { return max_packet_loss_ms.has_value() || min_delivered_ratio.has_value(); }
};

struct GravityFlows {
  uint32_t flows = 0;
  double total_gbps = 0;
};
struct GeneratedChains {
  uint32_t count = 0, services = 0, replicas = 0, min_hops = 0, max_hops = 0;
  uint64_t service_time_us = 0, budget_us = 0;
};

struct GeneratedFabrics {
  uint32_t planes = 0, rails = 0;
  double uplink_gbps = 0;  // 0: the facility's backbone capacity
};

struct DrillSpec {
  std::string name, description, path;
  topology::Topology topology;  // with the generated workloads, fabrics and services added
  uint64_t seed = 1;
  ReactionModel reaction;
  // The automatic drainer: pathcomp's defaults (on) unless the file's
  // auto_drain: says otherwise; the judge's thresholds are pathcomp's defaults.
  pathcomp::health::AutoDrainOptions auto_drain{};
  // What each elephant class optimizes and is protected against, as in
  // pathcomp's config (elephant_objectives, elephant_default). The simulator
  // plans with them; live and netns drills run pathcomp with its own config.
  pathcomp::McfClassPolicies elephant_policies{};
  uint64_t duration_ms = 0;
  std::vector<TimelineEvent> timeline;  // by time, file order within a time
  Expectations expect;
};

// Reads, validates and expands a drill file: every error with its line, the
// timeline's targets checked against the topology (unknown link, SRLG, node,
// facility, plane; an event after the end; a restore of nothing; auto_drain
// keys out of pathcomp's ranges).
[[nodiscard]] absl::StatusOr<DrillSpec> LoadDrill(const std::string& path);

}  // namespace geodesic::sim
