#include "pathcomp/solver/protection.h"

#include <algorithm>
#include <span>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "site_plan/site_plan_reader.h"

namespace geodesic::pathcomp {
namespace {

// Loads this far above a limit are rounding, not overload.
constexpr double kLimitTolerance = 1e-6;

bool AnyUsable(const Snapshot& snapshot, const std::vector<int>& links) {
  return std::any_of(links.begin(), links.end(), [&](int link) { return snapshot.link_state(link).usable; });
}

}  // namespace

std::vector<ProtectionFailure> ProtectionFailures(const Snapshot& snapshot, ProtectionKind kind) {
  std::vector<ProtectionFailure> failures;
  auto keep = [&](std::string name, std::vector<int> links, int facility = -1) {
    std::sort(links.begin(), links.end());
    links.erase(std::unique(links.begin(), links.end()), links.end());
    if (AnyUsable(snapshot, links)) failures.push_back({std::move(name), std::move(links), facility});
  };
  switch (kind) {
    case ProtectionKind::kNone: break;
    case ProtectionKind::kLinks: {
      std::vector<char> paired(snapshot.link_count(), 0);
      for (int link = 0; link < snapshot.link_count(); ++link) {
        if (paired[link]) continue;
        paired[link] = 1;
        std::vector<int> fiber{link};
        for (int back : snapshot.out_links(snapshot.link_dst(link))) {
          if (!paired[back] && snapshot.link_dst(back) == snapshot.link_src(link)) {
            paired[back] = 1;
            fiber.push_back(back);
            break;
          }
        }
        keep(absl::StrCat("link ", snapshot.link_id(link)), std::move(fiber));
      }
      break;
    }
    case ProtectionKind::kSrlgs: {
      std::map<int, std::vector<int>> links_of;
      for (int link = 0; link < snapshot.link_count(); ++link) {
        for (int srlg : snapshot.link_srlgs(link)) links_of[srlg].push_back(link);
      }
      for (auto& [srlg, links] : links_of) keep(absl::StrCat("srlg ", snapshot.srlg_name(srlg)), std::move(links));
      break;
    }
    case ProtectionKind::kFacilities: {
      std::vector<std::vector<int>> links_of(snapshot.facility_count());
      for (int link = 0; link < snapshot.link_count(); ++link) {
        links_of[snapshot.link_src(link)].push_back(link);
        links_of[snapshot.link_dst(link)].push_back(link);
      }
      for (int facility = 0; facility < snapshot.facility_count(); ++facility) {
        keep(absl::StrCat("facility ", snapshot.facility_id(facility)), std::move(links_of[facility]), facility);
      }
      break;
    }
  }
  return failures;
}

ProtectionChecker::ProtectionChecker(const Snapshot& snapshot, const McfClassPolicies& policies)
    : snapshot_(snapshot) {
  std::set<uint32_t> priorities;
  for (const Demand& demand : snapshot.demands()) priorities.insert(demand.priority);
  std::map<ProtectionKind, std::vector<int>> failures_of;  // kind -> indices into failures_
  for (uint32_t priority : priorities) {
    const McfClassPolicy& policy = policies.Of(priority);
    if (policy.protection == ProtectionKind::kNone) continue;
    auto [it, inserted] = failures_of.try_emplace(policy.protection);
    if (inserted) {
      for (ProtectionFailure& failure : ProtectionFailures(snapshot, policy.protection)) {
        std::set<int> lost;
        if (failure.facility >= 0) lost.insert(failure.facility);
        it->second.push_back(static_cast<int>(failures_.size()));
        failures_.push_back(std::move(failure));
        lost_facilities_.push_back(std::move(lost));
      }
    }
    classes_.push_back({priority, policy.protection, policy.protection_limit, it->second});
  }
  if (classes_.empty()) return;
  for (const Demand& demand : snapshot.demands()) {
    if (!snapshot.facility_prefixes(demand.dst).empty()) prefixes_.insert(snapshot.facility_prefixes(demand.dst)[0]);
  }
}

std::vector<FlowDemand> ProtectionChecker::FlowsUpTo(uint32_t priority, const std::set<int>& lost_facilities) const {
  std::vector<FlowDemand> flows;
  for (const Demand& demand : snapshot_.demands()) {
    if (demand.priority > priority || lost_facilities.count(demand.src) || lost_facilities.count(demand.dst) ||
        snapshot_.facility_prefixes(demand.dst).empty()) {
      continue;
    }
    flows.push_back({.src_facility = snapshot_.facility_id(demand.src),
                     .dst_prefix = snapshot_.facility_prefixes(demand.dst)[0],
                     .gbps = demand.gbps});
  }
  return flows;
}

ForwardingPlan ProtectionChecker::Forwarding(const v1::Plan& plan) const { return ForwardingPlan::Of(plan, prefixes_); }

std::vector<ClassProtectionCheck> ProtectionChecker::Check(const v1::Plan& plan) const {
  std::vector<ClassProtectionCheck> checks;
  if (classes_.empty()) return checks;
  const ForwardingPlan forwarding = Forwarding(plan);
  for (const ProtectedClass& cls : classes_) {
    ClassProtectionCheck& check = checks.emplace_back();
    check.priority = cls.priority;
    check.kind = cls.kind;
    check.limit = cls.limit;
    const GroupedFlows all_flows(forwarding, FlowsUpTo(cls.priority, {}));  // grouped once, not per failure
    for (int f : cls.failures) {
      const ProtectionFailure& failure = failures_[f];
      std::set<std::string> down;
      for (int link : failure.links) down.insert(snapshot_.link_id(link));
      const ForwardedLoads loads =
          lost_facilities_[f].empty()
              ? Forward(forwarding, all_flows, down)
              : Forward(forwarding, GroupedFlows(forwarding, FlowsUpTo(cls.priority, lost_facilities_[f])), down);
      ++check.failures_checked;
      for (const auto& [link_id, gbps] : loads.link_gbps) {
        const int link = snapshot_.LinkIndex(link_id);
        const double capacity = link < 0 ? 0 : snapshot_.link_capacity_gbps(link);
        if (capacity <= 0) continue;
        const double utilization = gbps / capacity;
        if (utilization > check.worst_utilization) {
          check.worst_utilization = utilization;
          check.worst_failure = failure.name;
          check.worst_link = link_id;
        }
        if (utilization > cls.limit * (1 + kLimitTolerance)) check.broken.push_back({f, link});
      }
    }
  }
  return checks;
}

bool FacilityCut::shortfall() const { return failure >= 0 && gbps > room_gbps * (1 + kLimitTolerance); }

std::string FacilityCut::Describe(const Snapshot& snapshot, const std::vector<ProtectionFailure>& failures) const {
  if (failure < 0) return "no failure constrains a facility";
  return absl::StrFormat("after %s, facility %s %s %.4g Gbps of class %u and the classes before it, and its other "
                         "links carry %.4g Gbps at the limit",
                         failures[failure].name, snapshot.facility_id(facility), sending ? "sends" : "receives", gbps,
                         priority, room_gbps);
}

std::vector<FacilityCut> ProtectionChecker::TightestFacilityCuts() const {
  const int facilities = snapshot_.facility_count();
  std::vector<std::vector<int>> in_links(facilities);
  for (int link = 0; link < snapshot_.link_count(); ++link) in_links[snapshot_.link_dst(link)].push_back(link);
  // Reachable from `from` (forward, or backward to it) without `down` links
  // and lost facilities.
  std::vector<char> down(snapshot_.link_count(), 0), reached(facilities, 0), lost(facilities, 0);
  std::vector<int> stack;
  auto reach = [&](int from, bool forward) {
    std::fill(reached.begin(), reached.end(), 0);
    stack.assign(1, from);
    reached[from] = 1;
    while (!stack.empty()) {
      const int at = stack.back();
      stack.pop_back();
      const std::span<const int> links =
          forward ? snapshot_.out_links(at) : std::span<const int>(in_links[at].data(), in_links[at].size());
      for (int link : links) {
        if (down[link] || !snapshot_.link_state(link).usable) continue;
        const int next = forward ? snapshot_.link_dst(link) : snapshot_.link_src(link);
        if (reached[next] || lost[next]) continue;
        reached[next] = 1;
        stack.push_back(next);
      }
    }
  };
  std::vector<FacilityCut> cuts;
  for (const ProtectedClass& cls : classes_) {
    FacilityCut& tightest = cuts.emplace_back();
    tightest.priority = cls.priority;
    double worst = 0;
    // Per facility, the demands it sends and receives that the check forwards.
    std::vector<std::vector<const Demand*>> sent(facilities), received(facilities);
    for (const Demand& demand : snapshot_.demands()) {
      if (demand.priority > cls.priority || demand.src == demand.dst ||
          snapshot_.facility_prefixes(demand.dst).empty()) {
        continue;
      }
      sent[demand.src].push_back(&demand);
      received[demand.dst].push_back(&demand);
    }
    for (int f : cls.failures) {
      const ProtectionFailure& failure = failures_[f];
      for (int link : failure.links) down[link] = 1;
      for (int facility : lost_facilities_[f]) lost[facility] = 1;
      // Only the facilities whose links the failure takes lose room.
      std::set<int> touched;
      for (int link : failure.links) {
        for (int end : {snapshot_.link_src(link), snapshot_.link_dst(link)}) {
          if (!lost[end]) touched.insert(end);
        }
      }
      for (int facility : touched) {
        for (bool sending : {true, false}) {
          double room = 0;
          for (int link : sending ? snapshot_.out_links(facility) : std::span<const int>(in_links[facility])) {
            if (!down[link] && snapshot_.link_state(link).usable) room += snapshot_.link_capacity_gbps(link);
          }
          room *= cls.limit;
          if (room <= 0) continue;  // cut off: its traffic is dropped, not carried
          const std::vector<const Demand*>& own = sending ? sent[facility] : received[facility];
          auto traffic = [&](bool reachable_only) {
            double gbps = 0;
            for (const Demand* demand : own) {
              const int there = sending ? demand->dst : demand->src;
              if (!lost[there] && (!reachable_only || reached[there])) gbps += demand->gbps;
            }
            return gbps;
          };
          // What it could reach bounds the rest: the search only for a cut that may be the tightest.
          double gbps = traffic(false);
          if (gbps / room <= worst) continue;
          reach(facility, sending);
          gbps = traffic(true);
          if (gbps / room > worst) {
            worst = gbps / room;
            tightest = {cls.priority, f, facility, sending, gbps, room};
          }
        }
      }
      for (int link : failure.links) down[link] = 0;
      for (int facility : lost_facilities_[f]) lost[facility] = 0;
    }
  }
  return cuts;
}

std::vector<McfFailure> ProtectionChecker::RepairModel(const v1::Plan& plan, const std::vector<int>& failures) const {
  const ForwardingPlan forwarding = Forwarding(plan);
  std::set<int> destinations;
  for (const Demand& demand : snapshot_.demands()) destinations.insert(demand.dst);
  std::vector<McfFailure> model;
  for (int f : failures) {
    const ProtectionFailure& failure = failures_[f];
    McfFailure& out = model.emplace_back();
    out.name = failure.name;
    out.arcs = failure.links;
    std::set<std::string> down;
    std::set<int> repairing;  // sites with a down link of their own
    for (int link : failure.links) {
      down.insert(snapshot_.link_id(link));
      if (!lost_facilities_[f].count(snapshot_.link_src(link))) repairing.insert(snapshot_.link_src(link));
    }
    for (int site : repairing) {
      const v1::SitePlan* site_plan = forwarding.Site(snapshot_.facility_id(site));
      if (site_plan == nullptr) continue;
      for (int dst : destinations) {
        if (dst == site || lost_facilities_[f].count(dst) || snapshot_.facility_prefixes(dst).empty()) continue;
        const std::string& prefix = snapshot_.facility_prefixes(dst)[0];
        if (forwarding.Route(*site_plan, prefix) == nullptr) continue;
        // One unit from here, as the routers forward it with the failure in
        // force: where a path of the next allocation that meets the down
        // link here goes (this site's surviving next hops or backup; or, where
        // this plan's route avoids the link, its route).
        const ForwardedLoads loads =
            Forward(forwarding, {{.src_facility = snapshot_.facility_id(site), .dst_prefix = prefix, .gbps = 1}}, down);
        McfReroute& reroute = out.reroutes.emplace_back();
        reroute.node = site;
        reroute.dst = dst;
        for (const auto& [link_id, load] : loads.link_gbps) {
          const int link = snapshot_.LinkIndex(link_id);
          if (link >= 0 && load > 0) reroute.arc_load.push_back({link, load});
        }
      }
    }
  }
  return model;
}

}  // namespace geodesic::pathcomp
