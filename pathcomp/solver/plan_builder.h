#pragma once
// A whole plan from one snapshot, as pathcomp publishes it: agent chains
// placed first (latency-critical), the elephant flows allocated in what is
// left, routes following that allocation as weighted next hops once the
// weights are shown to forward it loop-free, backups, the single-facility
// audit, and the workloads that moved since `previous`. Protected classes
// (McfClassPolicy::protection) are checked against every single failure of
// their kind with the plan's own backups; while some failure overloads a
// link, what it overloads is added to the allocation as a failure limit and
// the elephants and routes are made again (at most kMaxProtectionRounds
// times, and while the caller's ProtectionStop lets them). A plan that cannot
// be made failure-safe is published unprotected, with the reason in the
// class's protection_problem and in `problems`. Shared by the
// planner, what-if and the drill simulator, so all three plan alike.
// Pure: no I/O, no clock; no threads unless asked: with `threads` > 1 the
// elephant allocation's pricing rounds and the sites' routes are shared out
// to that many threads, and one more places
// the chains' backups, audits and writes them while the elephants are
// allocated (with the primaries, placed again on the build's thread) and
// the routes computed (their backups on as many more threads as the
// machine has cores the build leaves free). The plan is the same whatever
// the count.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "geodesic/v1/plan.pb.h"
#include "pathcomp/solver/chain_placer.h"
#include "pathcomp/solver/elephant_allocator.h"
#include "pathcomp/solver/path_solver.h"

namespace geodesic::pathcomp {

// Rounds of failure limits a build adds at most before it gives up on
// protecting a class.
inline constexpr int kMaxProtectionRounds = 12;

struct BuiltPlan {
  v1::Plan plan;
  ChainPlan chains;
  std::optional<ElephantPlan> elephants;  // nullopt when the allocation failed
  // What went wrong on the way (the plan is still usable: routes then fall
  // back to lowest-latency next hops), one line each, for the caller to log.
  std::vector<std::string> problems;
};

// The chain plan of the last build and the snapshot it was made for, kept
// between builds: when the next snapshot is the same inventory with links
// that only got worse, ChainPlacer::Replan re-places only the chains those
// links can have changed (the same result as a full PlanAll, which runs
// otherwise). One per sequence of plans (the planner's); thread-compatible.
struct ChainPlanCache {
  std::optional<Snapshot> snapshot;  // empty before the first build
  ChainPlan plan;                    // ChainPlacer(*snapshot).PlanAll()
};

// The steps of a build, in the order BuildPlan takes them.
enum class PlanPhase {
  kChains,     // chain primaries, backups and the single-facility audit (ChainPlacer);
               // with a second thread only the primaries, the rest beside the allocation
  kElephants,  // ElephantAllocator::Allocate
  kWcmp,       // BuildWcmp and CheckWcmpForwarding (skipped when the allocation failed)
  kRoutes,     // PathSolver::Solve: every site's routes and backups
  kProtection, // protected classes: the failure check, and rounds of allocation,
               // routes and check until the plan is failure-safe (protection.h)
  kChainWire,  // the chain plan written into the plan (AddChainPlan): with a second
               // thread, what the build still waited for the chains after the routes
  kMoved,      // the workloads that moved since `previous`, the summary, the cache
};
// Told as each phase ends, on the build's thread, so that a caller (a
// benchmark) can time them: the builder itself reads no clock.
using PlanPhaseObserver = std::function<void(PlanPhase)>;
// Asked, on the build's thread, before each round of failure limits and
// before every pricing round of its allocation (McfProtection::stop); true
// ends the rounds: the plan is the unprotected one, its class's
// protection_problem says protection was stopped and what still breaks.
// The caller's clock or budget (pathcomp: protection_budget_ms); empty: the
// rounds run until the plan is failure-safe, proven impossible, or
// kMaxProtectionRounds.
using ProtectionStop = std::function<bool()>;
// pathcomp's default for protection_budget_ms: the time one plan's rounds may take.
inline constexpr std::chrono::milliseconds kDefaultProtectionBudget{30'000};

// `allocator` keeps its warm state between calls; `previous` and `chain_cache`
// may be null (then chains are planned from scratch). With a cache, the chain
// plan is left in it for the next build (moved, not copied: BuiltPlan::chains
// is then empty; the published plan carries the chains as always).
// `phase_ended`, when set, is called once per phase in PlanPhase order, on
// the calling thread. `threads`: 1 builds on the calling thread alone; more
// prices the allocation's paths (McfSolverConfig::threads) and makes the
// routes (PathSolver::Solve) on that many and adds one thread for
// the chains' wire form; all are joined before returning.
BuiltPlan BuildPlan(const Snapshot& snapshot, const PlanStamp& stamp, ElephantAllocator& allocator,
                    const v1::Plan* previous, ChainPlanCache* chain_cache = nullptr,
                    const PlanPhaseObserver& phase_ended = {}, int threads = 1,
                    const ProtectionStop& protection_stop = {});

// The threads a service builds its plans on unless told: the machine's cores
// (std::thread::hardware_concurrency), at least 1, at most 8.
int DefaultBuildThreads();

}  // namespace geodesic::pathcomp
