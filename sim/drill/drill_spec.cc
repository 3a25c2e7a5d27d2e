#include "sim/drill/drill_spec.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "config/config_reader.h"
#include "pathcomp/solver/class_policy_config.h"
#include "sim/drill/drill_generator.h"
#include "topology/import.h"
#include "topology/synthetic_wan.h"

namespace geodesic::sim {
namespace {

using config::ConfigReader;

constexpr uint64_t kMaxDurationS = 7 * 86400;

// What a timeline entry's target must name in the topology.
bool TargetExists(const topology::Topology& topology, const TimelineEvent& event, std::string& why) {
  const std::string& id = event.id;
  auto has = [&](const auto& list, auto matches) { return std::any_of(list.begin(), list.end(), matches); };
  if (event.kind == "link") {
    if (has(topology.links, [&](const v1::Link& l) { return l.id() == id; })) return true;
    why = absl::StrCat("unknown link ", id);
  } else if (event.kind == "srlg") {
    if (has(topology.links, [&](const v1::Link& l) {
          return std::find(l.srlgs().begin(), l.srlgs().end(), id) != l.srlgs().end();
        })) {
      return true;
    }
    why = absl::StrCat("no link runs through srlg ", id);
  } else if (event.kind == "node") {
    if (has(topology.nodes, [&](const v1::Node& n) { return n.id() == id; })) return true;
    why = absl::StrCat("unknown node ", id);
  } else if (event.kind == "facility" || event.kind == "partition") {
    if (has(topology.facilities, [&](const v1::Facility& f) { return f.id() == id; })) return true;
    why = absl::StrCat("unknown facility ", id);
  } else if (event.kind == "plane") {
    for (const auto& fabric : topology.fabrics) {
      if (fabric.facility_id() != id) continue;
      if (event.plane < fabric.planes()) return true;
      why = absl::StrCat("the fabric of ", id, " has ", fabric.planes(), " planes, not plane ", event.plane);
      return false;
    }
    why = absl::StrCat("facility ", id, " has no fabric");
  }
  return false;
}

void ReadEvent(ConfigReader& entry, DrillSpec& spec) {
  TimelineEvent event;
  event.at_ms = static_cast<uint64_t>(entry.RequiredDouble("at_s", 0, kMaxDurationS) * 1000);
  int actions = 0;
  static const std::set<std::string> kFailKinds = {"link", "srlg", "node", "facility", "plane", "partition"};
  static const std::set<std::string> kDrainKinds = {"link", "node", "facility"};
  static const std::set<std::string> kRestoreKinds = {"link", "srlg", "node", "facility", "plane", "partition"};
  if (entry.Has("fail")) {
    ++actions;
    event.action = TimelineEvent::Action::kFail;
    event.kind = entry.RequiredString("fail");
    if (!kFailKinds.count(event.kind)) entry.AddError("fail", "expected link, srlg, node, facility, plane or partition");
  }
  if (entry.Has("degrade")) {
    ++actions;
    event.action = TimelineEvent::Action::kDegrade;
    event.kind = entry.RequiredString("degrade");
    if (event.kind != "link") entry.AddError("degrade", "only a link degrades");
    event.loss = entry.OptionalDouble("loss", 0, 0, 1);
    event.added_latency_us = static_cast<uint64_t>(entry.OptionalDouble("added_latency_ms", 0, 0, 60'000) * 1000);
    if (event.loss == 0 && event.added_latency_us == 0) entry.AddError("degrade", "give loss and/or added_latency_ms");
  }
  if (entry.Has("drain")) {
    ++actions;
    event.action = TimelineEvent::Action::kDrain;
    event.kind = entry.RequiredString("drain");
    if (!kDrainKinds.count(event.kind)) entry.AddError("drain", "expected link, node or facility");
  }
  if (entry.Has("restore")) {
    ++actions;
    event.action = TimelineEvent::Action::kRestore;
    event.kind = entry.RequiredString("restore");
    if (!kRestoreKinds.count(event.kind)) entry.AddError("restore", "expected link, srlg, node, facility, plane or partition");
  }
  if (entry.Has("leader_loss")) {
    ++actions;
    event.action = TimelineEvent::Action::kLeaderLoss;
    if (!entry.OptionalBool("leader_loss", true)) entry.AddError("leader_loss", "write leader_loss: true");
  }
  if (actions != 1) {
    entry.AddError("at_s", "an event has exactly one of fail, degrade, drain, restore, leader_loss");
    entry.RejectUnknownKeys();
    return;
  }
  if (event.action != TimelineEvent::Action::kLeaderLoss) {
    event.id = entry.RequiredString("id");
    if (event.kind == "plane") event.plane = static_cast<uint32_t>(entry.RequiredUint("plane", 0, 1023));
    std::string why;
    if (!event.id.empty() && !TargetExists(spec.topology, event, why)) entry.AddError("id", why);
  }
  if (event.at_ms > spec.duration_ms) entry.AddError("at_s", "after the drill's end (duration_s)");
  entry.RejectUnknownKeys();
  spec.timeline.push_back(std::move(event));
}

// The keys and ranges of pathcomp's `auto_drain:` (pathcomp_config.cc), which
// are those ValidateAutoDrainOptions accepts.
void ReadAutoDrain(ConfigReader& drain, pathcomp::health::AutoDrainOptions& o) {
  auto seconds = [&](const char* key, int64_t fallback_ms, uint64_t min, uint64_t max) {
    return static_cast<int64_t>(drain.OptionalUint(key, static_cast<uint64_t>(fallback_ms / 1000), min, max)) * 1000;
  };
  o.enabled = drain.OptionalBool("enabled", o.enabled);
  o.hold_ms = seconds("hold_s", o.hold_ms, 0, 86'400);
  o.undrain_hold_ms = seconds("undrain_hold_s", o.undrain_hold_ms, 0, 604'800);
  o.max_active = static_cast<uint32_t>(drain.OptionalUint("max_active", o.max_active, 0, 1000));
  o.max_per_hour = static_cast<uint32_t>(drain.OptionalUint("max_per_hour", o.max_per_hour, 0, 10'000));
  o.fail_open_links = static_cast<uint32_t>(drain.OptionalUint("fail_open_links", o.fail_open_links, 0, 100'000));
  o.fail_open_window_ms = seconds("fail_open_window_s", o.fail_open_window_ms, 1, 86'400);
  o.retry_refused_ms = seconds("retry_refused_s", o.retry_refused_ms, 1, 86'400);
  o.utilization_limit = drain.OptionalDouble("utilization_limit", o.utilization_limit, 0.01, 10);
  drain.RejectUnknownKeys();
}

}  // namespace

std::string TimelineEvent::Describe() const {
  std::string target = kind == "plane" ? absl::StrCat("plane ", id, ":", plane) : absl::StrCat(kind, " ", id);
  switch (action) {
    case Action::kFail: return absl::StrCat("fail ", target);
    case Action::kDegrade:
      return absl::StrCat("degrade ", target, " (loss ", loss, ", +", added_latency_us / 1000, " ms)");
    case Action::kDrain: return absl::StrCat("drain ", target);
    case Action::kRestore: return absl::StrCat("restore ", target);
    case Action::kLeaderLoss: return "leader loss";
  }
  return "?";
}

v1::FailureScope TimelineEvent::Scope() const {
  v1::FailureScope scope;
  scope.set_id(id);
  scope.set_plane(plane);
  if (kind == "link") scope.set_kind(v1::FAILURE_KIND_LINK);
  if (kind == "srlg") scope.set_kind(v1::FAILURE_KIND_SRLG);
  if (kind == "node") scope.set_kind(v1::FAILURE_KIND_NODE);
  if (kind == "facility" || kind == "partition") scope.set_kind(v1::FAILURE_KIND_FACILITY);
  if (kind == "plane") scope.set_kind(v1::FAILURE_KIND_PLANE);
  return scope;
}

absl::StatusOr<DrillSpec> LoadDrill(const std::string& path) {
  auto root = ConfigReader::OpenFile(path);
  if (!root.ok()) return root.status();
  DrillSpec spec;
  spec.path = path;
  spec.name = root->RequiredId("name");
  spec.description = root->OptionalString("description", "");
  if (auto synthetic = root->OptionalMap("synthetic_wan")) {
    const size_t errors_before = root->error_count();
    if (root->Has("topology")) root->AddError("synthetic_wan", "give either topology or synthetic_wan, not both");
    topology::SyntheticWanOptions options;
    options.seed = synthetic->OptionalUint("seed", 1, 0, UINT64_MAX);
    options.facilities = static_cast<uint32_t>(synthetic->RequiredUint("facilities", 8, 4096));
    options.mean_degree = synthetic->OptionalDouble("mean_degree", options.mean_degree, 2.2, 8);
    options.long_haul_links = static_cast<uint32_t>(synthetic->OptionalUint("long_haul_links", 0, 0, 4096));
    options.parallel_fraction = synthetic->OptionalDouble("parallel_fraction", options.parallel_fraction, 0, 1);
    options.elephant_flows = static_cast<uint32_t>(synthetic->OptionalUint("elephant_flows", 0, 0, 10'000'000));
    options.total_demand_gbps = synthetic->OptionalDouble("total_demand_gbps", 0, 0, 1e9);
    synthetic->RejectUnknownKeys();
    if (root->error_count() == errors_before) {
      auto topology = topology::GenerateSyntheticWan(options);
      if (!topology.ok()) {
        root->AddError("synthetic_wan", std::string(topology.status().message()));
      } else {
        spec.topology = *std::move(topology);
      }
    }
  } else {
    const std::string topology_path = root->RequiredPath("topology");
    if (!topology_path.empty()) {
      auto topology = topology::ImportTopology(topology_path);
      if (!topology.ok()) {
        root->AddError("topology", std::string(topology.status().message()));
      } else {
        spec.topology = *std::move(topology);
      }
    }
  }
  if (auto generate = root->OptionalMap("generate")) {
    spec.seed = generate->OptionalUint("seed", 1, 0, UINT64_MAX);
    ScaleDemands(generate->OptionalDouble("demand_scale", 1, 0, 1e6), spec.topology);
    if (auto gravity = generate->OptionalMap("gravity")) {
      GravityFlows flows;
      flows.flows = static_cast<uint32_t>(gravity->RequiredUint("flows", 1, 100'000));
      flows.total_gbps = gravity->RequiredDouble("total_gbps", 0.001, 1e9);
      gravity->RejectUnknownKeys();
      AddGravityFlows(flows, spec.seed, spec.topology);
    }
    if (auto chains = generate->OptionalMap("chains")) {
      GeneratedChains generated;
      generated.count = static_cast<uint32_t>(chains->RequiredUint("count", 1, 100'000));
      generated.services = static_cast<uint32_t>(chains->RequiredUint("services", 1, 10'000));
      generated.replicas = static_cast<uint32_t>(chains->RequiredUint("replicas", 1, 1'000));
      generated.min_hops = static_cast<uint32_t>(chains->RequiredUint("min_hops", 1, 64));
      generated.max_hops = static_cast<uint32_t>(chains->RequiredUint("max_hops", 1, 64));
      if (generated.max_hops < generated.min_hops) chains->AddError("max_hops", "below min_hops");
      generated.service_time_us = chains->OptionalUint("service_time_us", 1000, 0, 60'000'000);
      generated.budget_us = static_cast<uint64_t>(chains->RequiredDouble("budget_ms", 0.001, 600'000) * 1000);
      chains->RejectUnknownKeys();
      if (generated.max_hops >= generated.min_hops) AddChains(generated, spec.seed, spec.topology);
    }
    if (auto fabrics = generate->OptionalMap("fabrics")) {
      GeneratedFabrics generated;
      generated.planes = static_cast<uint32_t>(fabrics->RequiredUint("planes", 1, 64));
      generated.rails = static_cast<uint32_t>(fabrics->RequiredUint("rails", 1, 64));
      generated.uplink_gbps = fabrics->OptionalDouble("uplink_gbps", 0, 0, 1e9);
      fabrics->RejectUnknownKeys();
      AddFabrics(generated, spec.topology);
    }
    generate->RejectUnknownKeys();
  }
  if (auto reaction = root->OptionalMap("reaction")) {
    ReactionModel& r = spec.reaction;
    auto ms = [&](const char* key, uint32_t fallback, uint64_t min) {
      return static_cast<uint32_t>(reaction->OptionalUint(key, fallback, min, 3'600'000));
    };
    r.probe_interval_ms = ms("probe_interval_ms", r.probe_interval_ms, 1);
    r.detect_multiplier = static_cast<uint32_t>(reaction->OptionalUint("detect_multiplier", r.detect_multiplier, 1, 255));
    r.gray_detect_ms = ms("gray_detect_ms", r.gray_detect_ms, 0);
    r.local_repair_ms = ms("local_repair_ms", r.local_repair_ms, 0);
    r.debounce_ms = ms("debounce_ms", r.debounce_ms, 0);
    r.solve_ms = ms("solve_ms", r.solve_ms, 0);
    r.failover_ms = ms("failover_ms", r.failover_ms, 0);
    reaction->RejectUnknownKeys();
  }
  if (auto drain = root->OptionalMap("auto_drain")) ReadAutoDrain(*drain, spec.auto_drain);
  pathcomp::ReadClassPolicies(*root, spec.elephant_policies);
  spec.duration_ms = root->RequiredUint("duration_s", 1, kMaxDurationS) * 1000;
  for (auto& entry : root->RequiredMapList("timeline")) ReadEvent(entry, spec);
  std::stable_sort(spec.timeline.begin(), spec.timeline.end(),
                   [](const TimelineEvent& a, const TimelineEvent& b) { return a.at_ms < b.at_ms; });
  if (auto expect = root->OptionalMap("expect")) {
    Expectations& e = spec.expect;
    if (expect->Has("max_chain_outage_ms")) e.max_chain_outage_ms = expect->RequiredUint("max_chain_outage_ms", 0, UINT64_MAX);
    if (expect->Has("min_carried_ratio")) e.min_carried_ratio = expect->RequiredDouble("min_carried_ratio", 0, 1);
    if (expect->Has("min_settled_carried_ratio")) {
      e.min_settled_carried_ratio = expect->RequiredDouble("min_settled_carried_ratio", 0, 1);
    }
    if (expect->Has("max_mlu")) e.max_mlu = expect->RequiredDouble("max_mlu", 0, 1e6);
    if (expect->Has("max_budget_violations")) e.max_budget_violations = expect->RequiredUint("max_budget_violations", 0, UINT64_MAX);
    if (expect->Has("max_cut_workloads")) e.max_cut_workloads = expect->RequiredUint("max_cut_workloads", 0, UINT64_MAX);
    e.no_new_single_facility_dependencies = expect->OptionalBool("no_new_single_facility_dependencies", false);
    if (expect->Has("max_packet_loss_ms")) e.max_packet_loss_ms = expect->RequiredDouble("max_packet_loss_ms", 0, 3.6e6);
    if (expect->Has("min_delivered_ratio")) e.min_delivered_ratio = expect->RequiredDouble("min_delivered_ratio", 0, 1);
    if (expect->Has("min_auto_drains")) e.min_auto_drains = expect->RequiredUint("min_auto_drains", 0, UINT32_MAX);
    if (expect->Has("max_auto_drains")) e.max_auto_drains = expect->RequiredUint("max_auto_drains", 0, UINT32_MAX);
    if (expect->Has("min_auto_drain_refusals")) {
      e.min_auto_drain_refusals = expect->RequiredUint("min_auto_drain_refusals", 0, UINT32_MAX);
    }
    if (expect->Has("fail_open")) e.fail_open = expect->OptionalBool("fail_open", false);
    if (expect->Has("max_gray_link_load_gbps")) {
      e.max_gray_link_load_gbps = expect->RequiredDouble("max_gray_link_load_gbps", 0, 1e9);
    }
    if (expect->Has("max_utilization_after_repair")) {
      // -1: not a number in [0, 100], already said.
      e.max_utilization_after_repair = expect->OptionalDouble("max_utilization_after_repair", -1, 0, 100);
      if (*e.max_utilization_after_repair == 0) {
        expect->AddError("max_utilization_after_repair", "must be above 0 (a utilization, load / capacity, in (0, 100])");
      }
    }
    if (e.min_auto_drains && e.max_auto_drains && *e.max_auto_drains < *e.min_auto_drains) {
      expect->AddError("max_auto_drains", "below min_auto_drains");
    }
    expect->RejectUnknownKeys();
  }
  root->RejectUnknownKeys();
  if (auto status = root->status(); !status.ok()) return status;
  return spec;
}

}  // namespace geodesic::sim
