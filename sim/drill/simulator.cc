#include "sim/drill/simulator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <queue>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pathcomp/solver/forwarded_loads.h"
#include "pathcomp/solver/impact.h"
#include "pathcomp/solver/plan_builder.h"
#include "pathcomp/solver/shortest_paths.h"
#include "sim/drill/auto_drain_sim.h"
#include "sim/drill/drill_outcome.h"
#include "sim/drill/plan_routes.h"

namespace geodesic::sim {
namespace {

using pathcomp::BuildPlan;
using pathcomp::BuiltPlan;
using pathcomp::FlowDemand;
using pathcomp::ForwardedLoads;
using pathcomp::ForwardingPlan;
using pathcomp::HottestLink;
using pathcomp::ModelView;
using pathcomp::Snapshot;
using Action = TimelineEvent::Action;
using pathcomp::health::AutoDrainDecision;

// Who asked for a plan, besides a timeline event (its index).
constexpr int kFirstPlan = -1;
constexpr int kAutomaticPlan = -2;  // an automatic drain or undrain
constexpr double kChainHeadroom = 0.1;  // pathcomp's default chain_headroom
constexpr uint64_t kTickMs = 1000;      // pathcomp's AutoDrainer ticks once a second

// What a condition (a fail, degrade or drain still in force) is keyed by, so
// that a restore finds it.
std::string ConditionKey(const TimelineEvent& event) {
  return absl::StrCat(event.kind, "/", event.id, "/", event.kind == "plane" ? event.plane : 0);
}

struct Runtime {
  bool chain = false;
  bool up = true;
  uint64_t down_since = 0;
  int down_event = -1;  // the timeline event that took it down (-1: a plan)
  bool repaired = false;  // on local backups since the last plan
  std::vector<uint32_t> links;  // chains: the route in use (indices into link_ids_)
  uint64_t max_outage_ms = 0;
  std::string worst;  // the event of the longest outage
  bool lost_with_facility = false;
  bool never_placed = false;  // no path even before the first event: not the drill's doing
  bool counted() const { return !lost_with_facility && !never_placed; }
};

// A moment of the simulated clock; at equal times, events first, then
// repairs, then plans, then the automatic drainer's decision.
struct Moment {
  enum class Kind { kEvent = 0, kRepair = 1, kPlan = 2, kTick = 3 };
  uint64_t at_ms;
  Kind kind;
  int event;  // timeline index (for plans: the event that asked for it, or kFirstPlan, kAutomaticPlan)
  bool operator>(const Moment& o) const {
    if (at_ms != o.at_ms) return at_ms > o.at_ms;
    if (kind != o.kind) return kind > o.kind;
    return event > o.event;
  }
};


class Simulation {
 public:
  explicit Simulation(const DrillSpec& spec) : spec_(spec), allocator_(kChainHeadroom, spec.elephant_policies) {
    const topology::Topology& t = spec.topology;
    base_.facilities = t.facilities;
    base_.nodes = t.nodes;
    base_.links = t.links;
    for (auto& link : base_.links) {
      link.mutable_health()->set_state(v1::OPER_STATE_UP);
      link.mutable_health()->set_rtt_us(2 * link.latency_us());
    }
    base_.fabrics = t.fabrics;
    base_.services = t.services;
    base_.workloads = t.workloads;
    for (const auto& link : t.links) {
      node_facility_[link.src_node_id()] = link.src_facility_id();
      node_facility_[link.dst_node_id()] = link.dst_facility_id();
    }
    for (const auto& link : t.links) {
      capacity_gbps_[link.id()] = link.capacity_gbps();
      link_ids_.push_back(link.id());
    }
    for (const auto& workload : t.workloads) {
      if (workload.has_elephant()) elephant_prefixes_.insert(workload.elephant().dst_prefix());
      Runtime& runtime = runtime_[workload.id()];
      runtime.chain = workload.has_chain();
      workload_by_id_[workload.id()] = &workload;
    }
    truth_snapshot_ = Snapshot::Build(base_);
    if (spec.auto_drain.enabled) drainer_.emplace(spec.auto_drain, base_.links);
    report_.mutable_auto_drain()->set_enabled(spec.auto_drain.enabled);
    report_.mutable_forwarding();  // the simulator forwards: max_utilization_after_repair is judged
  }

  v1::DrillReport Run() {
    report_.set_name(spec_.name);
    report_.set_seed(spec_.seed);
    report_.set_duration_ms(spec_.duration_ms);
    report_.set_facilities(static_cast<uint32_t>(spec_.topology.facilities.size()));
    report_.set_links(static_cast<uint32_t>(spec_.topology.links.size()));
    for (const auto& workload : spec_.topology.workloads) {
      if (workload.has_chain()) report_.set_chains(report_.chains() + 1);
      if (workload.has_elephant()) report_.set_elephant_flows(report_.elephant_flows() + 1);
    }
    outcomes_.resize(spec_.timeline.size());
    Plan(0, kFirstPlan);
    for (const auto& [id, route] : current_->chains) {
      if (route.placed) report_.add_chain_latency_before_us(route.latency_us);
    }
    Sample(0);

    for (int e = 0; e < static_cast<int>(spec_.timeline.size()); ++e) {
      moments_.push({spec_.timeline[e].at_ms, Moment::Kind::kEvent, e});
    }
    bool sample_due = false;
    while (!moments_.empty()) {
      const Moment moment = moments_.top();
      moments_.pop();
      if (moment.at_ms > spec_.duration_ms) break;
      const TimelineEvent* event = moment.event >= 0 ? &spec_.timeline[moment.event] : nullptr;
      switch (moment.kind) {
        case Moment::Kind::kEvent: {
          Happen(moment.event, moment.at_ms);
          const uint64_t detected = DetectedAt(*event);
          outcomes_[moment.event].set_detected_at_ms(detected);
          // Routers repair what takes links down (a plane is inside a facility).
          if (event->action == Action::kFail && event->kind != "plane") {
            moments_.push({detected + spec_.reaction.local_repair_ms, Moment::Kind::kRepair, moment.event});
          }
          uint64_t plan_at = detected + spec_.reaction.debounce_ms + spec_.reaction.solve_ms;
          if (event->action == Action::kLeaderLoss) {
            leader_back_at_ = moment.at_ms + spec_.reaction.failover_ms;
            plan_at = leader_back_at_;
          }
          plan_at = std::max(plan_at, leader_back_at_);
          plan_event_[plan_at].push_back(moment.event);
          SchedulePlan(plan_at, moment.event);
          // The agents report the change once detected: the drainer looks
          // at the first tick from then.
          ScheduleTick((detected + kTickMs - 1) / kTickMs * kTickMs);
          break;
        }
        case Moment::Kind::kRepair: LocalRepair(moment.event, moment.at_ms); break;
        case Moment::Kind::kPlan: Plan(moment.at_ms, moment.event); break;
        case Moment::Kind::kTick: Tick(moment.at_ms); break;
      }
      // One sample per time at which the data plane may have changed (a
      // tick changes nothing there: its drains take effect at their plan).
      sample_due = sample_due || moment.kind != Moment::Kind::kTick;
      if (sample_due && (moments_.empty() || moments_.top().at_ms != moment.at_ms)) {
        Sample(moment.at_ms);
        sample_due = false;
      }
    }
    Finish();
    return report_;
  }

 private:
  // --- Views ---
  ModelView ViewWith(const std::map<std::string, TimelineEvent>& active) const {
    ModelView view = base_;
    std::vector<v1::FailureScope> failures;
    for (const auto& [key, event] : active) {
      if (event.action == Action::kDrain) {
        v1::Intent& intent = view.intents.emplace_back();
        intent.set_id(absl::StrCat("drill-drain-", key));
        auto* target = intent.mutable_drain()->mutable_target();
        if (event.kind == "link") target->set_link_id(event.id);
        if (event.kind == "node") target->set_node_id(event.id);
        if (event.kind == "facility") target->set_facility_id(event.id);
      } else if (event.action == Action::kDegrade) {
        const std::set<std::string> degraded = pathcomp::LinksTakenDown(view.links, event.Scope());
        for (auto& link : view.links) {
          if (!degraded.count(link.id())) continue;
          v1::LinkHealth& health = *link.mutable_health();
          health.set_state(v1::OPER_STATE_DEGRADED);
          health.set_loss_ratio(event.loss);
          health.set_rtt_us(health.rtt_us() + 2 * event.added_latency_us);
        }
      } else if (event.kind == "partition") {  // cut off, but alive: its replicas stay
        const std::set<std::string> down = pathcomp::LinksTakenDown(view.links, event.Scope());
        for (auto& link : view.links) {
          if (down.count(link.id())) link.mutable_health()->set_state(v1::OPER_STATE_DOWN);
        }
      } else {
        failures.push_back(event.Scope());
      }
    }
    // The spec was checked against the topology: the scopes exist.
    if (!failures.empty()) (void)pathcomp::ApplyFailures(failures, view);
    return view;
  }

  uint64_t DetectedAt(const TimelineEvent& event) const {
    switch (event.action) {
      case Action::kFail: return event.at_ms + spec_.reaction.hard_detect_ms();
      case Action::kDegrade: return event.at_ms + spec_.reaction.gray_detect_ms;
      case Action::kDrain:
      case Action::kLeaderLoss: return event.at_ms;
      case Action::kRestore: {
        auto it = truth_.find(ConditionKey(event));
        const bool drain = it == truth_.end() ? restored_drain_.count(ConditionKey(event)) > 0
                                              : it->second.action == Action::kDrain;
        return drain ? event.at_ms : event.at_ms + spec_.reaction.hard_detect_ms();
      }
    }
    return event.at_ms;
  }

  // The conditions the controller knows of at `at_ms`.
  std::map<std::string, TimelineEvent> KnownAt(uint64_t at_ms) const {
    std::map<std::string, TimelineEvent> known;
    for (const auto& [detected, index] : detections_) {
      if (detected > at_ms) continue;
      const TimelineEvent& event = spec_.timeline[index];
      if (event.action == Action::kRestore) {
        known.erase(ConditionKey(event));
      } else if (event.action != Action::kLeaderLoss) {
        known[ConditionKey(event)] = event;
      }
    }
    return known;
  }

  void RefreshTruth() {
    const ModelView view = ViewWith(truth_);
    down_links_.clear();
    for (const auto& link : view.links) {
      if (link.health().state() == v1::OPER_STATE_DOWN) down_links_.insert(link.id());
    }
    truth_snapshot_ = Snapshot::Build(view);
    lost_facilities_.clear();
    for (const auto& [key, event] : truth_) {
      if (event.action == Action::kFail && event.kind == "facility") lost_facilities_.insert(event.id);
    }
  }

  bool Crosses(const std::set<std::string>& links) const {
    for (const auto& link : links) {
      if (down_links_.count(link)) return true;
    }
    return false;
  }
  bool Crosses(const std::vector<uint32_t>& links) const {
    for (const uint32_t link : links) {
      if (down_links_.count(link_ids_[link])) return true;
    }
    return false;
  }

  bool Connected(const std::string& src, const std::string& dst) const {
    const int a = truth_snapshot_.FacilityIndex(src), b = truth_snapshot_.FacilityIndex(dst);
    if (a < 0 || b < 0) return false;
    const auto paths = pathcomp::ShortestPaths::Run(truth_snapshot_, a, {});
    return paths.distance_us[b] != pathcomp::kUnreachable;
  }

  // --- Moments ---
  void Happen(int index, uint64_t at_ms) {
    const TimelineEvent& event = spec_.timeline[index];
    v1::DrillEventOutcome& outcome = outcomes_[index];
    outcome.set_event(event.Describe());
    outcome.set_at_ms(at_ms);
    last_event_ = index;
    detections_.emplace(DetectedAt(event), index);
    if (event.action == Action::kLeaderLoss && drainer_) drainer_->NewLeader();
    if (event.action == Action::kRestore) {
      auto it = truth_.find(ConditionKey(event));
      if (it != truth_.end() && it->second.action == Action::kDrain) restored_drain_.insert(it->first);
      truth_.erase(ConditionKey(event));
    } else if (event.action != Action::kLeaderLoss) {
      truth_[ConditionKey(event)] = event;
    }
    RefreshTruth();
    for (auto& [id, runtime] : runtime_) {
      if (!runtime.lost_with_facility && LostWithFacility(id)) {
        runtime.lost_with_facility = true;
        if (!runtime.up) EndOutage(id, runtime, at_ms);
        continue;
      }
      if (!runtime.counted() || !runtime.up) continue;
      const bool hit = runtime.chain ? Crosses(runtime.links) : ElephantHit(id);
      if (!hit) continue;
      runtime.up = false;
      runtime.repaired = false;
      runtime.down_since = at_ms;
      runtime.down_event = index;
      outcome.add_affected_workload_ids(id);
    }
  }

  void LocalRepair(int index, uint64_t at_ms) {
    const TimelineEvent& event = spec_.timeline[index];
    v1::DrillEventOutcome& outcome = outcomes_[index];
    outcome.set_repaired_at_ms(at_ms);
    for (auto& [id, runtime] : runtime_) {
      if (runtime.up || !runtime.counted() || runtime.down_event != index) continue;
      if (runtime.chain) {
        const ChainRoute* backup = BackupFor(id, event);
        if (backup == nullptr || !backup->placed || Crosses(backup->links)) continue;
        runtime.links = backup->links;
        outcome.set_chains_repaired_locally(outcome.chains_repaired_locally() + 1);
      } else {
        const ElephantRoute& route = current_->elephants.at(id);
        if (!Connected(route.src, route.dst)) continue;
        runtime.repaired = true;
      }
      EndOutage(id, runtime, at_ms);
    }
    // The routers now forward on their repaired routes: what that puts on the links.
    RecordRepairLoads(Forward(forwarding_, ElephantDemands(), down_links_), capacity_gbps_, event.Describe(), outcome,
                      report_);
  }

  void Plan(uint64_t at_ms, int asking_event) {
    const ModelView view = ControllerView(at_ms);
    const Snapshot snapshot = Snapshot::Build(view);
    pathcomp::PlanStamp stamp;
    stamp.generation = ++generation_;
    stamp.reason = asking_event == kFirstPlan       ? "drill start"
                   : asking_event == kAutomaticPlan ? "automatic drain"
                                                    : spec_.timeline[asking_event].Describe();
    // The last plan's forwarding copy is not read while the next is built:
    // let go of it first, at the peak only one is held.
    forwarding_ = ForwardingPlan();
    BuiltPlan built = BuildPlan(snapshot, stamp, allocator_, current_ ? &current_->plan : nullptr, nullptr, {},
                                pathcomp::DefaultBuildThreads());
    // What the simulator keeps of the sites' routes, each site let go of as
    // its part is kept: the plan and its copy are never both whole.
    RouteSignatures routes = SignaturesOf(built.plan);
    forwarding_ = ForwardingPlan::OfReleasing(built.plan, elephant_prefixes_);
    auto next = std::make_unique<PlanState>(RoutesOf(snapshot, std::move(built), std::move(routes), link_ids_));
    const std::unique_ptr<PlanState> previous = std::move(current_);
    current_ = std::move(next);

    // Workloads follow the plan: placed ones on routes that survive are up.
    std::vector<uint64_t> latencies;
    uint32_t over_budget = 0;
    std::vector<std::string> cut;
    for (auto& [id, runtime] : runtime_) {
      if (!runtime.counted()) continue;
      bool placed = false;
      if (runtime.chain) {
        auto route = current_->chains.find(id);
        placed = route != current_->chains.end() && route->second.placed && !Crosses(route->second.links);
        if (placed) {
          runtime.links = route->second.links;
          latencies.push_back(route->second.latency_us);
          over_budget += route->second.within_budget ? 0 : 1;
        }
      } else {
        auto route = current_->elephants.find(id);
        placed = route != current_->elephants.end() && route->second.carried_gbps > 0;
        runtime.repaired = false;
        if (placed) placed = !ElephantHit(id);
      }
      if (!placed && asking_event == kFirstPlan) {
        runtime.never_placed = true;
        continue;
      }
      if (!placed) cut.push_back(id);
      if (placed && !runtime.up) EndOutage(id, runtime, at_ms);
      if (!placed && runtime.up) {
        runtime.up = false;
        runtime.down_since = at_ms;
        runtime.down_event = asking_event;
      }
    }
    last_cut_ = cut;
    const DrillOutcomes::Measures measures = totals_.Settle({.before = previous ? &previous->plan : nullptr,
                                                             .after = &current_->plan,
                                                             .chain_latency_us = latencies,
                                                             .budget_violations = over_budget,
                                                             .cut_workload_ids = cut,
                                                             .carried_ratio = CarriedRatio(),
                                                             .routes_changed = previous ? std::optional<uint32_t>(RoutesChanged(
                                                                                              previous->routes, current_->routes))
                                                                                        : std::nullopt});
    // The plan's routes as forwarded (links still down repaired around).
    const ForwardedLoads loads = Forward(forwarding_, ElephantDemands(), down_links_);
    const HottestLink hottest = Hottest(loads, capacity_gbps_);
    v1::DrillForwarding& forwarding = *report_.mutable_forwarding();
    if (hottest.utilization > forwarding.max_utilization_of_plans()) {
      forwarding.set_max_utilization_of_plans(hottest.utilization);
      forwarding.set_max_utilization_of_plans_link(hottest.link_id);
    }
    NoteUnforwarded(loads);
    for (int index : plan_event_[at_ms]) {
      v1::DrillEventOutcome& outcome = outcomes_[index];
      outcome.set_replanned_at_ms(at_ms);
      outcome.set_forwarded_utilization_after(hottest.utilization);
      DrillOutcomes::FillOutcome(measures, outcome);
    }
    last_latencies_ = std::move(latencies);
    MeasureGrayLoad();
  }

  // --- The automatic drainer ---
  // What the controller plans from at `at_ms`: the conditions it detected,
  // with the automatic drains in force.
  ModelView ControllerView(uint64_t at_ms) const {
    ModelView view = ViewWith(KnownAt(at_ms));
    if (drainer_) view.intents.insert(view.intents.end(), drainer_->intents().begin(), drainer_->intents().end());
    return view;
  }

  void SchedulePlan(uint64_t plan_at, int asking) {
    if (planned_at_.insert(plan_at).second) moments_.push({plan_at, Moment::Kind::kPlan, asking});
  }

  void ScheduleTick(uint64_t at_ms) {
    if (drainer_ && at_ms <= spec_.duration_ms && ticks_.insert(at_ms).second) {
      moments_.push({at_ms, Moment::Kind::kTick, -1});
    }
  }

  // The agents' reports up to `at_ms`: each change of health when the
  // controller detected it (so the judge counts every state change), then
  // every link's at `at_ms`.
  void ReportUntil(uint64_t at_ms) {
    for (auto it = detections_.upper_bound(reported_until_ms_); it != detections_.end() && it->first < at_ms;
         it = detections_.upper_bound(it->first)) {
      drainer_->Report(ViewWith(KnownAt(it->first)).links, it->first);
    }
    drainer_->Report(ViewWith(KnownAt(at_ms)).links, at_ms);
    reported_until_ms_ = at_ms;
  }

  // One second of pathcomp's AutoDrainer (auto_drainer.cc Tick): judge,
  // decide, and carry the orders out like an operator's drain.
  void Tick(uint64_t at_ms) {
    ReportUntil(at_ms);
    if (at_ms < leader_back_at_) {  // no leader acts: the replicas only judge
      ScheduleTick(at_ms + kTickMs);
      return;
    }
    const uint64_t plan_at = std::max(at_ms + spec_.reaction.debounce_ms + spec_.reaction.solve_ms, leader_back_at_);
    const uint64_t replanned_at = plan_at <= spec_.duration_ms ? plan_at : 0;
    AutoDrainDecision decision = drainer_->Decide(at_ms);
    for (const v1::AutoDrainEvent& event : decision.events) {
      RecordAction(at_ms, event.action(), {event.link_ids().begin(), event.link_ids().end()}, event.verdict(),
                   event.reason());
    }
    for (const pathcomp::health::UndrainOrder& order : decision.undrain) {
      std::vector<std::string> links;
      for (const v1::Intent& intent : drainer_->intents()) {
        if (std::find(order.intent_ids.begin(), order.intent_ids.end(), intent.id()) != order.intent_ids.end()) {
          links.push_back(intent.drain().target().link_id());
        }
      }
      drainer_->Undrained(order);
      RecordAction(at_ms, v1::AutoDrainEvent::ACTION_UNDRAINED, links, v1::LINK_VERDICT_HEALTHY, order.reason)
          .set_replanned_at_ms(replanned_at);
      SchedulePlan(plan_at, kAutomaticPlan);
    }
    for (const pathcomp::health::DrainOrder& order : decision.drain) {
      // The pre-check against the model as it is now: drains taken by this
      // decision already in it, as pathcomp stores each before the next.
      std::vector<v1::Intent> intents = drainer_->IntentsFor(order, at_ms);
      const std::vector<std::string> refusals = DrainPrecheck(ControllerView(at_ms), intents, kChainHeadroom,
                                                              drainer_->options().utilization_limit);
      if (!refusals.empty()) {
        drainer_->Refused(order, at_ms);
        v1::DrillAutoDrainAction& refused =
            RecordAction(at_ms, v1::AutoDrainEvent::ACTION_REFUSED, order.link_ids, order.verdict, order.evidence);
        for (const std::string& refusal : refusals) refused.add_refusals(refusal);
        continue;
      }
      drainer_->Drained(order, std::move(intents), at_ms);
      RecordAction(at_ms, v1::AutoDrainEvent::ACTION_DRAINED, order.link_ids, order.verdict, order.evidence)
          .set_replanned_at_ms(replanned_at);
      SchedulePlan(plan_at, kAutomaticPlan);
    }
    if (!drainer_->quiet()) ScheduleTick(at_ms + kTickMs);
  }

  v1::DrillAutoDrainAction& RecordAction(uint64_t at_ms, v1::AutoDrainEvent::Action action,
                                         const std::vector<std::string>& links, v1::LinkVerdict verdict,
                                         const std::string& reason) {
    return AddAutoDrainAction({.at_ms = at_ms, .action = action, .link_ids = links, .verdict = verdict, .reason = reason,
                               .after_event_index = last_event_,
                               .after_event = last_event_ >= 0 ? spec_.timeline[last_event_].Describe() : ""},
                              *report_.mutable_auto_drain());
  }

  // After a plan: the links degraded now, for the gray-load measure.
  void MeasureGrayLoad() {
    if (!drainer_ || drainer_->intents().empty()) return;
    std::set<std::string> degraded;
    for (const auto& [key, event] : truth_) {
      if (event.action != Action::kDegrade) continue;
      for (const std::string& link : pathcomp::LinksTakenDown(spec_.topology.links, event.Scope())) degraded.insert(link);
    }
    AddGrayLoad(current_->plan, degraded, drainer_->intents(), *report_.mutable_auto_drain());
  }

  void Finish() {
    for (auto& [id, runtime] : runtime_) {
      if (!runtime.up && runtime.counted()) EndOutage(id, runtime, spec_.duration_ms);
      if (runtime.lost_with_facility) report_.add_lost_with_facility(id);
      if (runtime.counted() && runtime.max_outage_ms > 0) {
        v1::WorkloadOutage& outage = *report_.add_outages();
        outage.set_workload_id(id);
        outage.set_outage_ms(runtime.max_outage_ms);
        outage.set_event(runtime.worst);
      }
    }
    for (auto& outcome : outcomes_) *report_.add_events() = outcome;
    for (uint64_t latency : last_latencies_) report_.add_chain_latency_after_us(latency);
    for (const auto& id : last_cut_) report_.add_cut_workload_ids(id);
    for (const auto& dependency : totals_.all_new_dependencies()) report_.add_new_dependencies(dependency);
    JudgeDrill(spec_.expect, report_);
  }

  // --- Helpers ---
  // The plan's backup of chain `id` for the failure of `event`.
  const ChainRoute* BackupFor(const std::string& id, const TimelineEvent& event) const {
    auto backups = current_->backups.find(id);
    if (backups == current_->backups.end()) return nullptr;
    std::set<std::pair<pathcomp::ChainFailure::Kind, std::string>> scopes;
    using K = pathcomp::ChainFailure::Kind;
    if (event.kind == "link") {  // the fiber: the link and its reverse
      for (const std::string& link : pathcomp::LinksTakenDown(spec_.topology.links, event.Scope())) {
        scopes.insert({K::kLink, link});
      }
    } else if (event.kind == "srlg") {
      scopes.insert({K::kSrlg, event.id});
    } else if (event.kind == "facility" || event.kind == "partition") {
      scopes.insert({K::kFacility, event.id});
    } else if (event.kind == "node") {
      auto facility = node_facility_.find(event.id);
      if (facility != node_facility_.end()) scopes.insert({K::kFacility, facility->second});
    }
    // As routerd repairs: the backup protecting the failure, else any backup
    // that avoids every link down now.
    const ChainRoute* fallback = nullptr;
    for (const auto& backup : backups->second) {
      if (!backup.route.placed || Crosses(backup.route.links)) continue;
      if (scopes.count({backup.kind, backup.id})) return &backup.route;
      if (fallback == nullptr) fallback = &backup.route;
    }
    return fallback;
  }

  // The demand of every elephant flow the drill counts (not lost with its
  // facility, placed by the first plan), for forwarding.
  std::vector<FlowDemand> ElephantDemands() const {
    std::vector<FlowDemand> flows;
    for (const auto& workload : spec_.topology.workloads) {
      if (!workload.has_elephant() || !runtime_.at(workload.id()).counted()) continue;
      const v1::ElephantFlow& flow = workload.elephant();
      flows.push_back({.src_facility = flow.src_facility_id(), .dst_prefix = flow.dst_prefix(), .gbps = flow.demand_gbps()});
    }
    return flows;
  }

  void NoteUnforwarded(const ForwardedLoads& loads) {
    v1::DrillForwarding& forwarding = *report_.mutable_forwarding();
    forwarding.set_max_dropped_gbps(std::max(forwarding.max_dropped_gbps(), loads.dropped_gbps));
    forwarding.set_max_looped_gbps(std::max(forwarding.max_looped_gbps(), loads.looped_gbps));
  }

  bool ElephantHit(const std::string& id) const {
    auto route = current_->elephants.find(id);
    if (route == current_->elephants.end()) return false;
    for (const auto& [links, gbps] : route->second.paths) {
      if (gbps > 0 && Crosses(links)) return true;
    }
    return false;
  }

  bool LostWithFacility(const std::string& id) const {
    if (lost_facilities_.empty()) return false;
    auto found = workload_by_id_.find(id);
    if (found == workload_by_id_.end()) return false;
    const v1::Workload& workload = *found->second;
    if (workload.has_chain()) return lost_facilities_.count(workload.chain().origin_facility_id()) > 0;
    auto route = current_->elephants.find(id);
    if (route == current_->elephants.end()) return lost_facilities_.count(workload.elephant().src_facility_id()) > 0;
    return lost_facilities_.count(route->second.src) > 0 || lost_facilities_.count(route->second.dst) > 0;
  }

  double CarriedRatio() const {
    double demand = 0, carried = 0;
    for (const auto& workload : spec_.topology.workloads) {
      if (!workload.has_elephant()) continue;
      const Runtime& runtime = runtime_.at(workload.id());
      if (!runtime.counted()) continue;
      demand += workload.elephant().demand_gbps();
      auto route = current_->elephants.find(workload.id());
      if (route == current_->elephants.end()) continue;
      double flowing = route->second.carried_gbps;
      if (!runtime.repaired) {
        for (const auto& [links, gbps] : route->second.paths) flowing -= Crosses(links) ? gbps : 0;
      }
      carried += std::max(0.0, flowing);
    }
    const double mlu = std::max(1.0, current_->plan.elephants().max_utilization());
    return demand <= 0 ? 1.0 : std::min(1.0, carried / demand / mlu);
  }

  void EndOutage(const std::string& id, Runtime& runtime, uint64_t at_ms) {
    const uint64_t outage = at_ms - runtime.down_since;
    runtime.up = true;
    const std::string cause = runtime.down_event >= 0               ? spec_.timeline[runtime.down_event].Describe()
                              : runtime.down_event == kAutomaticPlan ? "an automatic drain's plan"
                                                                     : "a plan";
    if (runtime.down_event >= 0 && runtime.chain && runtime.counted()) {
      v1::DrillEventOutcome& outcome = outcomes_[runtime.down_event];
      outcome.set_max_chain_outage_ms(std::max(outcome.max_chain_outage_ms(), outage));
    }
    if (outage > runtime.max_outage_ms) {
      runtime.max_outage_ms = outage;
      runtime.worst = cause;
    }
    if (runtime.chain && runtime.counted() && outage > report_.max_chain_outage_ms()) {
      report_.set_max_chain_outage_ms(outage);
      report_.set_worst_chain(absl::StrCat(id, " at ", cause));
    }
  }


  void Sample(uint64_t at_ms) {
    v1::DrillSample& sample = *report_.add_samples();
    sample.set_at_ms(at_ms);
    sample.set_carried_ratio(CarriedRatio());
    sample.set_mlu(current_->plan.elephants().max_utilization());
    uint32_t down = 0;
    for (const auto& [id, runtime] : runtime_) down += runtime.chain && !runtime.up && runtime.counted();
    sample.set_chains_down(down);
    report_.set_min_carried_ratio(report_.samples_size() == 1 ? sample.carried_ratio()
                                                              : std::min(report_.min_carried_ratio(), sample.carried_ratio()));
  }

  const DrillSpec& spec_;
  ModelView base_;
  std::optional<SimulatedAutoDrainer> drainer_;  // unset when the drill disables auto_drain
  std::priority_queue<Moment, std::vector<Moment>, std::greater<>> moments_;
  std::set<uint64_t> planned_at_;
  std::set<uint64_t> ticks_;       // ticks scheduled
  uint64_t reported_until_ms_ = 0;  // the agents' reports reached the judge up to here
  int last_event_ = -1;            // the latest timeline event that happened
  std::map<std::string, std::string> node_facility_;
  std::map<std::string, const v1::Workload*> workload_by_id_;
  pathcomp::ElephantAllocator allocator_;
  uint64_t generation_ = 0;
  std::unique_ptr<PlanState> current_;
  ForwardingPlan forwarding_;  // the current plan's routes toward elephant_prefixes_
  std::set<std::string> elephant_prefixes_;
  std::map<std::string, double> capacity_gbps_;  // by link id
  std::map<std::string, Runtime> runtime_;
  std::map<std::string, TimelineEvent> truth_;  // conditions in force, by key
  std::set<std::string> restored_drain_;
  std::multimap<uint64_t, int> detections_;  // detection time -> event
  std::set<std::string> down_links_;
  LinkIds link_ids_;  // the inventory's, in its order: what chain routes index
  std::set<std::string> lost_facilities_;
  Snapshot truth_snapshot_;
  uint64_t leader_back_at_ = 0;
  std::map<uint64_t, std::vector<int>> plan_event_;
  std::vector<v1::DrillEventOutcome> outcomes_;
  std::vector<std::string> last_cut_;
  std::vector<uint64_t> last_latencies_;
  v1::DrillReport report_;
  DrillOutcomes totals_{report_};  // the report's running totals, as the live runner keeps them
};

}  // namespace

v1::DrillReport RunDrill(const DrillSpec& spec) { return Simulation(spec).Run(); }

}  // namespace geodesic::sim
