#include "sim/drill/live_drill.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "files/atomic_file.h"
#include "pathcomp/solver/forwarded_loads.h"
#include "pathcomp/solver/impact.h"
#include "pathcomp/solver/path_solver.h"
#include "sim/drill/drill_outcome.h"
#include "sim/drill/simulator.h"
#include "sim/lab_client.h"
#include "sim/local_lab.h"
#include "site_plan/chain_paths.h"
#include "site_plan/site_plan_reader.h"
#include "topology/topology_writer.h"

namespace geodesic::sim {
namespace {

using Clock = std::chrono::system_clock;  // routerd records its repairs in wall-clock time
using Action = TimelineEvent::Action;

int64_t Ms(Clock::time_point at) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
}

// The links an event takes down (or degrades, drains, restores).
std::set<std::string> LinksOf(const topology::Topology& topology, const TimelineEvent& event) {
  return pathcomp::LinksTakenDown(topology.links, event.Scope());
}

bool AvoidsLinks(const v1::Plan& plan, const std::set<std::string>& links) {
  for (const auto& site : plan.sites()) {
    for (const auto& route : site.routes()) {
      const v1::NextHopGroup& group = site_plan::PrimaryGroup(site, route);
      for (int i = 0; i < group.ports_size(); ++i) {
        if (links.count(site_plan::LinkId(site, group, i))) return false;
      }
    }
  }
  return true;
}

// A facility's first local repair for an event: when, and every link its
// routerd then had down.
struct SeenRepair {
  int64_t at_unix_ms = 0;
  std::vector<std::string> down_links;
};

// When each facility's routerd repaired locally for one of `links`, at or
// after `since` (wall-clock ms): the first repair its own record
// (LocalLab::LocalRepairs) shows with one of them down.
std::map<std::string, SeenRepair> LocalRepairs(const LocalLab& lab, const std::set<std::string>& links, int64_t since) {
  std::map<std::string, SeenRepair> repaired;
  for (const auto& facility : lab.topology().facilities) {
    const auto log = lab.LocalRepairs(facility.id());
    if (!log) continue;
    for (const auto& repair : log->repairs()) {
      if (repair.at_unix_ms() < since) continue;
      const bool names = std::any_of(repair.down_links().begin(), repair.down_links().end(),
                                     [&](const std::string& link) { return links.count(link) > 0; });
      if (!names) continue;
      repaired[facility.id()] = {.at_unix_ms = repair.at_unix_ms(),
                                 .down_links = {repair.down_links().begin(), repair.down_links().end()}};
      break;
    }
  }
  return repaired;
}

// For each chain, the facility where its path first crosses one of `links`;
// chains not crossing them are left out.
std::map<std::string, std::string> ChainsCrossing(const v1::Plan& plan, const topology::Topology& topology,
                                                  const std::set<std::string>& links) {
  std::set<std::pair<std::string, std::string>> failed_hops;  // (src facility, dst facility)
  for (const auto& link : topology.links) {
    if (links.count(link.id())) failed_hops.insert({link.src_facility_id(), link.dst_facility_id()});
  }
  std::map<std::string, std::string> crossing;
  for (const auto& chain : plan.chains()) {
    if (!chain.primary().placed()) continue;
    for (const auto& hop : chain.primary().hops()) {
      for (const uint32_t index : {hop.path_there(), hop.path_back()}) {
        const std::vector<std::string> path = site_plan::ChainPathIds(chain, index);
        for (size_t i = 0; i + 1 < path.size() && !crossing.count(chain.workload_id()); ++i) {
          if (failed_hops.count({path[i], path[i + 1]})) crossing[chain.workload_id()] = path[i];
        }
      }
    }
  }
  return crossing;
}

// What a restore finds its condition by.
std::string Key(const TimelineEvent& event) {
  return absl::StrCat(event.kind, "/", event.id, "/", event.kind == "plane" ? event.plane : 0);
}

// The state pathcomp holds for one fabric plane (UNKNOWN when none is reported).
v1::OperState PlaneState(LocalLab& lab, const std::string& facility_id, uint32_t plane) {
  auto stub = lab.OperatorClient("admin");
  grpc::ClientContext context;
  context.set_deadline(Clock::now() + std::chrono::seconds(5));
  v1::ListFabricsRequest request;
  request.set_facility_id(facility_id);
  v1::ListFabricsResponse response;
  if (!stub->ListFabrics(&context, request, &response).ok()) return v1::OPER_STATE_UNKNOWN;
  for (const auto& fabric : response.fabrics()) {
    for (const auto& health : fabric.plane_health()) {
      if (health.plane() == plane) return health.state();
    }
  }
  return v1::OPER_STATE_UNKNOWN;
}

class LiveRun {
 public:
  LiveRun(const DrillSpec& spec, LocalLab& lab, LiveDrillTarget& target, std::chrono::milliseconds settle_timeout)
      : spec_(spec), lab_(lab), target_(target), settle_timeout_(settle_timeout) {}

  absl::StatusOr<v1::DrillReport> Run() {
    report_.set_name(spec_.name);
    report_.set_seed(spec_.seed);
    report_.set_facilities(static_cast<uint32_t>(spec_.topology.facilities.size()));
    report_.set_links(static_cast<uint32_t>(spec_.topology.links.size()));
    for (const auto& workload : spec_.topology.workloads) {
      if (workload.has_chain()) report_.set_chains(report_.chains() + 1);
      if (workload.has_elephant()) report_.set_elephant_flows(report_.elephant_flows() + 1);
    }
    // Settled: every link measured up, and the controller says the plan
    // reflects that and is at every site's routers.
    const std::chrono::milliseconds timeout = settle_timeout_;
    if (auto up = client_.WaitLinksIn(v1::OPER_STATE_UP, timeout); !up.ok()) {
      return absl::DeadlineExceededError(absl::StrCat("live drill ", spec_.name, ": the lab did not settle: ", up.message()));
    }
    auto revision = client_.Plan();
    if (!revision.ok()) return revision.status();
    auto converged = client_.WaitConverged({.timeout = timeout, .min_model_revision = revision->model_revision()});
    if (!converged.ok()) {
      return absl::DeadlineExceededError(
          absl::StrCat("live drill ", spec_.name, ": the lab did not settle: ", converged.status().message()));
    }
    const v1::Plan baseline = converged->plan();
    for (const auto& chain : baseline.chains()) {
      if (chain.primary().placed()) report_.add_chain_latency_before_us(chain.primary().total_latency_us());
    }
    start_ = Clock::now();
    report_.mutable_forwarding();  // local repairs' link loads are judged here too
    totals_.Settle(SettledFromPlans(nullptr, baseline));
    Sample(baseline);
    if (auto began = target_.Begin(Ms(start_)); !began.ok()) return began;
    for (const TimelineEvent& event : spec_.timeline) {
      if (auto status = Drive(event); !status.ok()) return status;
    }
    report_.set_duration_ms(static_cast<uint64_t>(Ms(Clock::now()) - Ms(start_)));
    if (auto ended = target_.End(report_); !ended.ok()) return ended;
    if (auto plan = client_.Plan(); plan.ok()) {
      for (const auto& chain : plan->plan().chains()) {
        if (chain.primary().placed()) report_.add_chain_latency_after_us(chain.primary().total_latency_us());
      }
      for (const auto& id : CutWorkloads(plan->plan())) report_.add_cut_workload_ids(id);
    }
    for (const auto& dependency : totals_.all_new_dependencies()) report_.add_new_dependencies(dependency);
    for (const auto& [id, outage] : outages_) *report_.add_outages() = outage;
    JudgeDrill(spec_.expect, report_);
    return report_;
  }

 private:
  absl::Status Drive(const TimelineEvent& event) {
    v1::DrillEventOutcome& outcome = *report_.add_events();
    outcome.set_event(event.Describe());
    auto before_answer = client_.Plan();
    if (!before_answer.ok()) return before_answer.status();
    const v1::Plan* before = &before_answer->plan();
    const std::set<std::string> links =
        event.action == Action::kLeaderLoss ? std::set<std::string>{} : LinksOf(spec_.topology, event);
    const TimelineEvent* restored = nullptr;
    if (event.action == Action::kRestore) {
      auto it = active_.find(Key(event));
      if (it != active_.end()) restored = &it->second;
    }
    const bool takes_down = event.action == Action::kFail;
    std::map<std::string, std::string> crossing;
    if (takes_down) crossing = ChainsCrossing(*before, spec_.topology, links);
    for (const auto& [chain, facility] : crossing) outcome.add_affected_workload_ids(chain);

    const Clock::time_point injected = Clock::now();
    outcome.set_at_ms(static_cast<uint64_t>(Ms(injected) - Ms(start_)));
    if (auto status = Inject(event, restored, links); !status.ok()) return status;

    // Wait for the reaction: the controller holds the change (detected), then
    // says the plan reflects it and is at every site's routers (converged).
    const std::chrono::milliseconds timeout = settle_timeout_;
    std::optional<int64_t> detected_at, replanned_at;
    const bool drain_or_restore_of_drain =
        event.action == Action::kDrain || (restored != nullptr && restored->action == Action::kDrain);
    const absl::Status detected = WaitUntil(absl::StrCat("pathcomp to see ", event.Describe()), timeout, [&] {
      if (drain_or_restore_of_drain || event.action == Action::kLeaderLoss) {
        detected_at = Ms(injected);  // answered by the call that made it
      } else if (event.kind == "plane") {
        const v1::OperState want = takes_down ? v1::OPER_STATE_DOWN : v1::OPER_STATE_UP;
        if (PlaneState(lab_, event.id, event.plane) == want) detected_at = Ms(Clock::now());
      } else {
        const auto states = client_.LinkStates();
        bool seen = !links.empty();
        for (const auto& link : links) {
          auto it = states.find(link);
          const v1::OperState want = takes_down                          ? v1::OPER_STATE_DOWN
                                     : event.action == Action::kDegrade ? v1::OPER_STATE_DEGRADED
                                                                        : v1::OPER_STATE_UP;
          seen = seen && it != states.end() && it->second == want;
        }
        if (seen) detected_at = Ms(Clock::now());
      }
      return detected_at.has_value();
    });
    if (!detected.ok()) return absl::DeadlineExceededError(absl::StrCat("live drill ", spec_.name, ": ", detected.message()));
    // The revision once the change is seen: the plan must be computed from it.
    auto seen = client_.Plan();
    if (!seen.ok()) return seen.status();
    const uint64_t revision = seen->model_revision();
    std::vector<std::string> facilities;
    for (const auto& facility : spec_.topology.facilities) facilities.push_back(facility.id());
    std::string gap;
    const absl::Status replanned = WaitUntil(
        absl::StrCat("a plan from model revision >= ", revision, (takes_down ? " avoiding the failed links" : ""),
                     " at every site's routers after ", event.Describe()),
        timeout, [&] {
          auto plan = client_.Plan();
          if (!plan.ok()) {
            gap = plan.status().ToString();
            return false;
          }
          gap = ConvergenceGap(*plan, facilities, revision);
          if (gap.empty() && takes_down && !AvoidsLinks(plan->plan(), links)) gap = "the plan still uses a failed link";
          if (!gap.empty()) return false;
          replanned_at = Ms(Clock::now());
          after_ = plan->plan();
          return true;
        });
    if (!replanned.ok()) {
      return absl::DeadlineExceededError(absl::StrCat("live drill ", spec_.name, ": ", replanned.message(), "; still: ", gap));
    }
    const int64_t t0 = Ms(injected);
    outcome.set_detected_at_ms(static_cast<uint64_t>(*detected_at - Ms(start_)));
    outcome.set_replanned_at_ms(static_cast<uint64_t>(*replanned_at - Ms(start_)));
    // Chains: back when the routerd where their path crosses the failure
    // repaired locally, or else when the new plan was installed.
    if (takes_down) {
      const auto repairs = LocalRepairs(lab_, links, t0);
      int64_t first_repair = 0;
      for (const auto& [facility, seen] : repairs) {
        first_repair = first_repair == 0 ? seen.at_unix_ms : std::min(first_repair, seen.at_unix_ms);
      }
      if (first_repair != 0) {
        outcome.set_repaired_at_ms(static_cast<uint64_t>(first_repair - Ms(start_)));
        RepairLoads(*before, repairs, *replanned_at, event, outcome);
      }
      for (const auto& [chain, facility] : crossing) {
        auto repaired = repairs.find(facility);
        const int64_t back =
            repaired != repairs.end() ? std::min(repaired->second.at_unix_ms, *replanned_at) : *replanned_at;
        const uint64_t outage = static_cast<uint64_t>(std::max<int64_t>(0, back - t0));
        if (repaired != repairs.end() && repaired->second.at_unix_ms <= *replanned_at) {
          outcome.set_chains_repaired_locally(outcome.chains_repaired_locally() + 1);
        }
        outcome.set_max_chain_outage_ms(std::max(outcome.max_chain_outage_ms(), outage));
        v1::WorkloadOutage& recorded = outages_[chain];
        if (outage > recorded.outage_ms()) {
          recorded.set_workload_id(chain);
          recorded.set_outage_ms(outage);
          recorded.set_event(event.Describe());
        }
        if (outage > report_.max_chain_outage_ms()) {
          report_.set_max_chain_outage_ms(outage);
          report_.set_worst_chain(absl::StrCat(chain, " at ", event.Describe()));
        }
      }
    }
    DrillOutcomes::FillOutcome(totals_.Settle(SettledFromPlans(before, after_)), outcome);
    Sample(after_);
    return target_.Settled(after_, outcome);
  }

  // The link loads of the routerds' own repairs until the re-plan: the
  // elephants forwarded through the plan they had, each site repairing for
  // the links its routerd recorded down (routerd's RepairRoute on the plan it
  // installed: what its routers were given), without the demands of failed
  // facilities. Computed from the real repairs, not measured on packets.
  void RepairLoads(const v1::Plan& plan, const std::map<std::string, SeenRepair>& repairs, int64_t replanned_at,
                   const TimelineEvent& event, v1::DrillEventOutcome& outcome) {
    std::set<std::string> down;
    for (const auto& [facility, seen] : repairs) {
      if (seen.at_unix_ms <= replanned_at) down.insert(seen.down_links.begin(), seen.down_links.end());
    }
    std::set<std::string> lost;  // facilities failed and not restored
    for (const auto& [key, active] : active_) {
      if (active.action == Action::kFail && active.kind == "facility") lost.insert(active.id);
    }
    std::vector<pathcomp::FlowDemand> flows;
    std::set<std::string> prefixes;
    std::map<std::string, double> capacity_gbps;
    for (const auto& link : spec_.topology.links) capacity_gbps[link.id()] = link.capacity_gbps();
    std::map<std::string, std::string> facility_of_prefix;
    for (const auto& facility : spec_.topology.facilities) {
      for (const auto& prefix : facility.prefixes()) facility_of_prefix[prefix] = facility.id();
    }
    for (const auto& workload : spec_.topology.workloads) {
      if (!workload.has_elephant()) continue;
      const v1::ElephantFlow& flow = workload.elephant();
      const auto dst = facility_of_prefix.find(flow.dst_prefix());
      if (lost.count(flow.src_facility_id()) || (dst != facility_of_prefix.end() && lost.count(dst->second))) continue;
      flows.push_back(
          {.src_facility = flow.src_facility_id(), .dst_prefix = flow.dst_prefix(), .gbps = flow.demand_gbps()});
      prefixes.insert(flow.dst_prefix());
    }
    RecordRepairLoads(pathcomp::Forward(pathcomp::ForwardingPlan::Of(plan, prefixes), flows, down), capacity_gbps,
                      event.Describe(), outcome, report_);
  }

  absl::Status Inject(const TimelineEvent& event, const TimelineEvent* restored, const std::set<std::string>& links) {
    const std::string key = Key(event);
    switch (event.action) {
      case Action::kFail:
        if (event.kind == "plane") {
          if (auto status = lab_.SetPlaneState(event.id, event.plane, "down"); !status.ok()) return status;
        }
        if (!links.empty()) {
          if (auto status = target_.SetLinksDown(links); !status.ok()) return status;
        }
        if (event.kind == "facility") {
          if (auto status = target_.SetFacilityUp(event.id, false); !status.ok()) return status;
        }
        active_[key] = event;
        return absl::OkStatus();
      case Action::kDegrade:
        if (auto status = target_.DegradeLinks(links, event); !status.ok()) return status;
        active_[key] = event;
        return absl::OkStatus();
      case Action::kDrain: {
        v1::AddIntentRequest request;
        request.set_force(true);
        v1::Intent& intent = *request.mutable_intent();
        intent.set_id(absl::StrCat("drill-drain-", event.kind, "-", event.id));
        intent.set_reason(absl::StrCat("drill ", spec_.name));
        auto* target = intent.mutable_drain()->mutable_target();
        if (event.kind == "link") target->set_link_id(event.id);
        if (event.kind == "node") target->set_node_id(event.id);
        if (event.kind == "facility") target->set_facility_id(event.id);
        auto stub = lab_.OperatorClient("admin");
        grpc::ClientContext context;
        context.set_deadline(Clock::now() + std::chrono::seconds(30));
        v1::AddIntentResponse response;
        const grpc::Status status = stub->AddIntent(&context, request, &response);
        if (!status.ok()) return absl::InternalError(absl::StrCat(event.Describe(), ": ", status.error_message()));
        active_[key] = event;
        return absl::OkStatus();
      }
      case Action::kRestore: {
        if (restored == nullptr) return absl::FailedPreconditionError(absl::StrCat(event.Describe(), ": nothing to restore"));
        if (restored->action == Action::kDrain) {
          auto stub = lab_.OperatorClient("admin");
          grpc::ClientContext context;
          context.set_deadline(Clock::now() + std::chrono::seconds(30));
          v1::DeleteIntentRequest request;
          request.set_id(absl::StrCat("drill-drain-", event.kind, "-", event.id));
          v1::DeleteIntentResponse response;
          const grpc::Status status = stub->DeleteIntent(&context, request, &response);
          if (!status.ok()) return absl::InternalError(absl::StrCat(event.Describe(), ": ", status.error_message()));
        } else if (event.kind == "plane") {
          if (auto status = lab_.SetPlaneState(event.id, event.plane, "up"); !status.ok()) return status;
        } else {
          if (restored->action == Action::kFail && restored->kind == "facility") {
            if (auto status = target_.SetFacilityUp(event.id, true); !status.ok()) return status;
          }
          if (auto status = target_.RestoreLinks(links); !status.ok()) return status;
        }
        active_.erase(key);
        return absl::OkStatus();
      }
      case Action::kLeaderLoss:
        lab_.Kill("pathcomp", SIGKILL);
        // The sleep is the drill: the controller stays away for the spec's failover time.
        std::this_thread::sleep_for(std::chrono::milliseconds(spec_.reaction.failover_ms));
        return lab_.Restart("pathcomp");
    }
    return absl::OkStatus();
  }

  void Sample(const v1::Plan& plan) {
    v1::DrillSample& sample = *report_.add_samples();
    sample.set_at_ms(static_cast<uint64_t>(std::max<int64_t>(0, Ms(Clock::now()) - Ms(start_))));
    sample.set_carried_ratio(PlanCarriedRatio(plan));
    sample.set_mlu(plan.elephants().max_utilization());
    report_.set_min_carried_ratio(report_.samples_size() == 1 ? sample.carried_ratio()
                                                              : std::min(report_.min_carried_ratio(), sample.carried_ratio()));
  }

  const DrillSpec& spec_;
  LocalLab& lab_;
  LiveDrillTarget& target_;
  const std::chrono::milliseconds settle_timeout_;
  LabClient client_{lab_};
  Clock::time_point start_;
  v1::Plan after_;
  std::map<std::string, TimelineEvent> active_;
  std::map<std::string, v1::WorkloadOutage> outages_;
  v1::DrillReport report_;
  DrillOutcomes totals_{report_};  // the report's running totals, as the simulator keeps them
};

}  // namespace

absl::Status HealthFileTarget::SetLinksDown(const std::set<std::string>& links) {
  for (const auto& link : links) {
    if (auto status = lab_.SetLinkState(link, "down"); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status HealthFileTarget::DegradeLinks(const std::set<std::string>& links, const TimelineEvent& event) {
  for (const auto& link : links) {
    uint64_t rtt = 0;
    for (const auto& l : topology_.links) rtt = l.id() == link ? 2 * (l.latency_us() + event.added_latency_us) : rtt;
    if (auto status = lab_.SetLinkHealth(link, absl::StrCat("state: degraded, rtt_us: ", rtt, ", loss_ratio: ", event.loss));
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status HealthFileTarget::RestoreLinks(const std::set<std::string>& links) {
  for (const auto& link : links) {
    if (auto status = lab_.SetLinkHealth(link, ""); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::DrillReport> RunLiveDrillOn(const DrillSpec& spec, LocalLab& lab, LiveDrillTarget& target,
                                               std::chrono::milliseconds settle_timeout) {
  return LiveRun(spec, lab, target, settle_timeout).Run();
}

absl::StatusOr<std::string> WriteDrillTopology(const DrillSpec& spec, const std::string& work_dir) {
  std::error_code error;
  std::filesystem::create_directories(work_dir, error);
  if (error) return absl::UnavailableError(absl::StrCat(work_dir, ": ", error.message()));
  const std::string path = work_dir + "/topology.yaml";
  if (auto written = files::AtomicWriteFile(path, topology::WriteTopologyYaml(spec.topology)); !written.ok()) {
    return written;
  }
  return path;
}

absl::StatusOr<v1::DrillReport> RunLiveDrill(const DrillSpec& spec, const LiveDrillOptions& options) {
  absl::StatusOr<std::string> topology_path = WriteDrillTopology(spec, options.work_dir);
  if (!topology_path.ok()) return topology_path.status();
  LabOptions lab_options;
  lab_options.source_dir = options.source_dir;
  lab_options.binary_dir = options.binary_dir;
  lab_options.work_dir = options.work_dir + "/lab";
  lab_options.topology_path = *topology_path;
  // Link health comes from the drill (the agents' health files), not from
  // probes over a loaded loopback: what a link does is the drill's to say.
  lab_options.probe_interval_ms = 0;
  lab_options.fabric_health_files = true;  // plane failures through the agents' fabric source
  lab_options.bgp_facilities = options.frr_facilities;
  if (lab_options.bgp_facilities.empty()) {
    for (const TimelineEvent& event : spec.timeline) {
      if (event.action != Action::kFail || event.kind != "link") continue;
      for (const auto& link : spec.topology.links) {
        if (link.id() == event.id) lab_options.bgp_facilities = {link.src_facility_id()};
      }
      break;
    }
  }
  auto lab = LocalLab::Create(lab_options);
  if (!lab.ok()) return lab.status();
  if (auto status = (*lab)->StartAll(); !status.ok()) return status;
  HealthFileTarget target(**lab, spec.topology);
  return RunLiveDrillOn(spec, **lab, target, std::chrono::milliseconds(options.settle_timeout_ms));
}

}  // namespace geodesic::sim
