#include "pathcomp/solver/plan_builder.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pathcomp/solver/chain_plan_proto.h"
#include "pathcomp/solver/protection.h"
#include "pathcomp/solver/wcmp.h"

namespace geodesic::pathcomp {
namespace {

// The weighted next hops that follow the allocation, when they forward it
// loop-free (nullopt: routes take the lowest-latency next hops).
std::optional<Wcmp> WeightsFor(const Snapshot& snapshot, const absl::StatusOr<ElephantPlan>& elephants,
                               std::vector<std::string>& problems) {
  std::optional<Wcmp> weights;
  if (elephants.ok()) {
    auto wcmp = BuildWcmp(snapshot, elephants->allocation);
    if (!wcmp.ok()) {
      problems.push_back(absl::StrCat("weighted next hops failed: ", wcmp.status().message()));
    } else if (const ForwardingCheck check = CheckWcmpForwarding(snapshot, *wcmp, elephants->allocation); !check.ok) {
      problems.push_back(absl::StrCat("weighted next hops refused by the forwarding check: loop ", check.loop,
                                      ", undelivered ", check.undelivered_gbps, " Gbps, max difference ",
                                      check.max_abs_diff_gbps, " Gbps"));
    } else {
      weights = *std::move(wcmp);
    }
  }
  return weights;
}

v1::Plan RoutesFor(const Snapshot& snapshot, const PlanStamp& stamp, const std::optional<Wcmp>& weights,
                   int threads) {
  return PathSolver().Solve(snapshot, stamp, weights ? &*weights : nullptr, std::max(threads, 1));
}

// The check holds each limit exactly; the rows aim this much under it, so
// that the weights' rounding (1/1000 of a route's traffic per next hop,
// wcmp.h) does not leave a link a hair over after the re-plan.
constexpr double kProtectionRowMargin = 0.005;

// The same repair: the same reroutes, loads equal up to float noise.
bool SameRepair(const McfFailure& a, const McfFailure& b) {
  if (a.reroutes.size() != b.reroutes.size()) return false;
  for (size_t r = 0; r < a.reroutes.size(); ++r) {
    const McfReroute& x = a.reroutes[r];
    const McfReroute& y = b.reroutes[r];
    if (x.node != y.node || x.dst != y.dst || x.arc_load.size() != y.arc_load.size()) return false;
    for (size_t i = 0; i < x.arc_load.size(); ++i) {
      if (x.arc_load[i].first != y.arc_load[i].first || std::abs(x.arc_load[i].second - y.arc_load[i].second) > 1e-9) {
        return false;
      }
    }
  }
  return true;
}

// Protected classes: checks the plan against every failure of each class's
// kind; while some break, adds what they break as failure limits (with the
// repair model of the plan just built, beside those of the plans before it)
// and allocates and routes again. The plan and allocation that hold every
// limit are kept in `built` and `elephants`; when none does — a facility cut
// proves it impossible before any round, a round's solver proves it, the
// rounds run out (kMaxProtectionRounds) or `stop` ends them — the first
// (unprotected) ones, with the reason.
void Protect(const Snapshot& snapshot, const PlanStamp& stamp, ElephantAllocator& allocator,
             std::span<const ChainPlacement> chain_primaries, int threads, const ProtectionStop& stop,
             absl::StatusOr<ElephantPlan>& elephants, BuiltPlan& built) {
  const ProtectionChecker checker(snapshot, allocator.policies());
  if (checker.empty()) return;
  std::map<uint32_t, double> unprotected_mlu;
  for (const McfClassResult& result : elephants->allocation.classes) unprotected_mlu[result.priority] = result.max_utilization;
  std::vector<ClassProtectionCheck> checks = checker.Check(built.plan);
  auto safe = [](const std::vector<ClassProtectionCheck>& all) {
    return std::all_of(all.begin(), all.end(), [](const ClassProtectionCheck& c) { return c.failure_safe(); });
  };
  std::optional<std::tuple<ElephantPlan, v1::Plan, std::vector<ClassProtectionCheck>>> unprotected;
  std::map<uint32_t, std::set<std::pair<int, int>>> limits;  // class -> (failure, link) held
  std::vector<McfFailure> models;             // the repairs held, of every round's plan
  std::map<int, std::vector<int>> models_of;  // failure -> its repairs in `models`
  // What the solver says no allocation holds under the repairs so far: this
  // round's, the last round's, and for which failure and link.
  std::string impossible, proven_before;
  std::pair<std::string, int> proven_at, proven_before_at;
  std::vector<std::string> round_problems;  // of the plan the last round built
  // A facility whose own traffic a failure leaves too little room for: no
  // allocation helps, so no round is tried.
  std::string cut_proof;
  if (!safe(checks)) {
    for (const FacilityCut& cut : checker.TightestFacilityCuts()) {
      if (!cut.shortfall()) continue;
      cut_proof = absl::StrCat("no allocation protects class ", cut.priority, ": ",
                               cut.Describe(snapshot, checker.failures()));
      break;
    }
  }
  int rounds = 0;
  bool stopped = false;  // by `stop`, before or during a round
  for (; cut_proof.empty() && rounds < kMaxProtectionRounds && !safe(checks); ++rounds) {
    if (stop && stop()) {
      stopped = true;
      break;
    }
    if (!unprotected) unprotected.emplace(*elephants, built.plan, checks);
    std::set<int> failures;
    for (const ClassProtectionCheck& check : checks) {
      for (const auto& broken : check.broken) limits[check.priority].insert({broken.failure, broken.link});
    }
    for (const auto& [priority, held] : limits) {
      for (const auto& [failure, link] : held) failures.insert(failure);
    }
    // Every failure's repair as each round's plan does it: the allocation
    // must hold the limits under all of them, or the next plan's routes and
    // backups undo what the last allocation avoided (GEANT oscillates so
    // between putting Amsterdam-Brussels' traffic onto Malta and not).
    const std::vector<int> order(failures.begin(), failures.end());
    std::vector<McfFailure> repairs = checker.RepairModel(built.plan, order);
    for (size_t i = 0; i < order.size(); ++i) {
      std::vector<int>& of_failure = models_of[order[i]];
      const bool seen = std::any_of(of_failure.begin(), of_failure.end(),
                                    [&](int m) { return SameRepair(models[m], repairs[i]); });
      if (seen) continue;
      of_failure.push_back(static_cast<int>(models.size()));
      models.push_back(std::move(repairs[i]));
    }
    McfProtection protection;
    protection.failures = models;
    protection.stop = stop;
    for (const auto& [priority, held] : limits) {
      const double limit = allocator.policies().Of(priority).protection_limit;
      for (const auto& [failure, link] : held) {
        for (int model : models_of[failure]) {
          protection.limits[priority].push_back(
              {.failure = model,
               .arc = link,
               .limit_gbps = (1 - kProtectionRowMargin) * limit * snapshot.link_capacity_gbps(link)});
        }
      }
    }
    auto next = allocator.Allocate(snapshot, chain_primaries, &protection, threads);
    if (!next.ok()) {
      impossible = absl::StrCat("the allocation with failure limits failed: ", next.status().message());
      break;
    }
    if (next->allocation.stats.stopped) {
      stopped = true;  // mid-allocation: its flows may not hold the limits, and prove nothing
      break;
    }
    for (const McfClassResult& result : next->allocation.classes) {
      if (result.failure_limit_excess_gbps <= 0) continue;
      impossible = absl::StrFormat(
          "no allocation keeps class %u within its limits under the repairs of the plans tried: after %s, %s would "
          "carry %.1f Gbps over its limit",
          result.priority, protection.failures[result.failure_limit_excess_failure].name,
          snapshot.link_id(result.failure_limit_excess_arc), result.failure_limit_excess_gbps);
      proven_at = {protection.failures[result.failure_limit_excess_failure].name, result.failure_limit_excess_arc};
      break;
    }
    round_problems.clear();
    v1::Plan plan = RoutesFor(snapshot, stamp, WeightsFor(snapshot, next, round_problems), threads);
    elephants = *std::move(next);
    built.plan = std::move(plan);
    checks = checker.Check(built.plan);
    // The same failure and link proven twice in a row: the new plan's repair
    // did not change it.
    if (!impossible.empty() && !proven_before.empty() && proven_at == proven_before_at) break;
    proven_before = std::exchange(impossible, std::string());
    proven_before_at = std::exchange(proven_at, {});
  }
  std::string problem;
  if (!safe(checks)) {
    for (const ClassProtectionCheck& check : checks) {
      if (check.failure_safe()) continue;
      const std::string& proof = !cut_proof.empty()    ? cut_proof
                                 : !impossible.empty() ? impossible
                                                       : proven_before;  // the last round's
      problem = !proof.empty() ? proof
                : stopped
                    ? absl::StrFormat("protection stopped by its budget in round %d of failure limits; in the last "
                                      "plan checked %s puts %s at %.3f of its capacity",
                                      rounds + 1, check.worst_failure, check.worst_link, check.worst_utilization)
                    : absl::StrFormat("after %d rounds of failure limits, %s still puts %s at %.3f of its capacity",
                                      kMaxProtectionRounds, check.worst_failure, check.worst_link,
                                      check.worst_utilization);
      break;
    }
    if (unprotected) {
      auto& [first_elephants, first_plan, first_checks] = *unprotected;
      elephants = std::move(first_elephants);
      built.plan = std::move(first_plan);
      checks = std::move(first_checks);
    }
    built.problems.push_back(absl::StrCat("protected classes not failure-safe, the plan is the unprotected one: ", problem));
  } else if (unprotected) {
    // The protected plan is kept: what its own weights ran into, not the first's.
    built.problems = std::move(round_problems);
  }
  for (v1::ElephantClass& out : *elephants->summary.mutable_classes()) {
    for (const ClassProtectionCheck& check : checks) {
      if (check.priority != out.priority()) continue;
      out.set_failure_safe(check.failure_safe());
      out.set_failures_checked(check.failures_checked);
      out.set_max_utilization_after_failure(check.worst_utilization);
      out.set_worst_failure(check.worst_failure);
      out.set_worst_failure_link(check.worst_link);
      out.set_unprotected_max_utilization(unprotected_mlu[check.priority]);
      if (!check.failure_safe()) out.set_protection_problem(problem);
    }
  }
}

}  // namespace

BuiltPlan BuildPlan(const Snapshot& snapshot, const PlanStamp& stamp, ElephantAllocator& allocator,
                    const v1::Plan* previous, ChainPlanCache* chain_cache,
                    const PlanPhaseObserver& phase_ended, int threads, const ProtectionStop& protection_stop) {
  auto ended = [&](PlanPhase phase) {
    if (phase_ended) phase_ended(phase);
  };
  BuiltPlan built;
  // With one thread the chains come first, on it; with more they run
  // beside the allocation, which keeps `threads` busy, so their backups
  // take only the cores the build leaves (on 2 cores, two threads for them
  // slowed Cogentco's allocation from 0.83 to 1.0-1.15 s).
  const int chain_threads =
      threads > 1 ? std::clamp(static_cast<int>(std::thread::hardware_concurrency()) - threads, 1, threads) : 1;
  auto plan_chains = [&] {
    if (chain_cache != nullptr && chain_cache->snapshot) {
      built.chains =
          ChainPlacer(snapshot, chain_threads).Replan(std::move(chain_cache->plan), *chain_cache->snapshot);
    } else {
      built.chains = ChainPlacer(snapshot, chain_threads).PlanAll();
    }
    if (chain_cache != nullptr) chain_cache->snapshot.reset();  // its plan was moved out
  };
  // The elephants need only the chains' primaries (their links keep the
  // headroom): with a second thread the chains' backups, audit and wire form
  // are made beside the allocation and the routes, into a plan of their own
  // whose chain fields are swapped in afterwards (PathSolver writes none),
  // while this thread places the primaries again for the allocation. Both
  // threads only read the snapshot; `built.chains` and `chain_cache` are the
  // chain thread's until it is joined (this one writes `built`'s other fields).
  v1::Plan chain_wire;
  std::exception_ptr chain_error;
  std::vector<ChainPlacement> primaries;
  std::jthread chain_writer;  // joins when it goes out of scope, whatever happens
  if (threads > 1) {
    chain_writer = std::jthread([&] {
      try {
        plan_chains();
        AddChainPlan(snapshot, built.chains, chain_wire);
      } catch (...) {  // std::bad_alloc: rethrown on the build's thread
        chain_error = std::current_exception();
      }
    });
    primaries = ChainPlacer(snapshot).PlacePrimaries();
  } else {
    plan_chains();
  }
  const std::span<const ChainPlacement> chain_primaries =
      threads > 1 ? std::span<const ChainPlacement>(primaries) : std::span<const ChainPlacement>(built.chains.primary);
  ended(PlanPhase::kChains);
  auto elephants = allocator.Allocate(snapshot, chain_primaries, nullptr, threads);
  ended(PlanPhase::kElephants);
  if (!elephants.ok()) {
    built.problems.push_back(absl::StrCat("elephant allocation failed: ", elephants.status().message()));
  }
  const std::optional<Wcmp> weights = WeightsFor(snapshot, elephants, built.problems);
  ended(PlanPhase::kWcmp);
  built.plan = RoutesFor(snapshot, stamp, weights, threads);
  ended(PlanPhase::kRoutes);
  if (elephants.ok()) Protect(snapshot, stamp, allocator, chain_primaries, threads, protection_stop, elephants, built);
  ended(PlanPhase::kProtection);
  if (chain_writer.joinable()) {
    chain_writer.join();
    if (chain_error) std::rethrow_exception(chain_error);
    built.plan.mutable_chains()->Swap(chain_wire.mutable_chains());
    built.plan.mutable_single_facility_dependencies()->Swap(chain_wire.mutable_single_facility_dependencies());
  } else {
    AddChainPlan(snapshot, built.chains, built.plan);
  }
  ended(PlanPhase::kChainWire);
  // Both sides lvalues: `previous ? *previous : v1::Plan()` would copy the
  // whole previous plan (1.5 GB on a 754-facility backbone) to read its chains.
  std::vector<std::string> moved =
      MovedChains(previous != nullptr ? *previous : v1::Plan::default_instance(), built.plan);
  if (elephants.ok()) {
    *built.plan.mutable_elephants() = elephants->summary;
    moved.insert(moved.end(), elephants->moved_workload_ids.begin(), elephants->moved_workload_ids.end());
    built.elephants = *std::move(elephants);
  }
  std::sort(moved.begin(), moved.end());
  for (auto& id : moved) built.plan.add_moved_workload_ids(std::move(id));
  if (chain_cache != nullptr) {
    chain_cache->snapshot = snapshot;
    chain_cache->plan = std::move(built.chains);
    built.chains = ChainPlan();
  }
  ended(PlanPhase::kMoved);
  return built;
}

int DefaultBuildThreads() { return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 8); }

}  // namespace geodesic::pathcomp
