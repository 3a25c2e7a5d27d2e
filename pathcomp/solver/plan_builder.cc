#include "pathcomp/solver/plan_builder.h"

#include <algorithm>
#include <exception>
#include <thread>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/chain_plan_proto.h"
#include "pathcomp/solver/wcmp.h"

namespace geodesic::pathcomp {

BuiltPlan BuildPlan(const Snapshot& snapshot, const PlanStamp& stamp, ElephantAllocator& allocator,
                    const v1::Plan* previous, ChainPlanCache* chain_cache,
                    const PlanPhaseObserver& phase_ended, int threads) {
  auto ended = [&](PlanPhase phase) {
    if (phase_ended) phase_ended(phase);
  };
  BuiltPlan built;
  if (chain_cache != nullptr && chain_cache->snapshot) {
    built.chains = ChainPlacer(snapshot).Replan(std::move(chain_cache->plan), *chain_cache->snapshot);
  } else {
    built.chains = ChainPlacer(snapshot).PlanAll();
  }
  if (chain_cache != nullptr) chain_cache->snapshot.reset();  // its plan was moved out
  ended(PlanPhase::kChains);
  // The chains' wire form needs nothing the elephants decide: with a second
  // thread it is written beside the allocation and the routes, into a plan
  // of its own whose chain fields are swapped in afterwards (PathSolver
  // writes none). Both threads only read the snapshot and the chain plan.
  v1::Plan chain_wire;
  std::exception_ptr chain_wire_error;
  std::jthread chain_writer;  // joins when it goes out of scope, whatever happens
  if (threads > 1) {
    chain_writer = std::jthread([&] {
      try {
        AddChainPlan(snapshot, built.chains, chain_wire);
      } catch (...) {  // std::bad_alloc: rethrown on the build's thread
        chain_wire_error = std::current_exception();
      }
    });
  }
  auto elephants = allocator.Allocate(snapshot, built.chains);
  ended(PlanPhase::kElephants);
  if (!elephants.ok()) {
    built.problems.push_back(absl::StrCat("elephant allocation failed: ", elephants.status().message()));
  }
  std::optional<Wcmp> weights;
  if (elephants.ok()) {
    auto wcmp = BuildWcmp(snapshot, elephants->allocation);
    if (!wcmp.ok()) {
      built.problems.push_back(absl::StrCat("weighted next hops failed: ", wcmp.status().message()));
    } else if (const ForwardingCheck check = CheckWcmpForwarding(snapshot, *wcmp, elephants->allocation);
               !check.ok) {
      built.problems.push_back(absl::StrCat("weighted next hops refused by the forwarding check: loop ", check.loop,
                                            ", undelivered ", check.undelivered_gbps, " Gbps, max difference ",
                                            check.max_abs_diff_gbps, " Gbps"));
    } else {
      weights = *std::move(wcmp);
    }
  }
  ended(PlanPhase::kWcmp);
  built.plan = PathSolver().Solve(snapshot, stamp, weights ? &*weights : nullptr, std::max(threads, 1));
  ended(PlanPhase::kRoutes);
  if (chain_writer.joinable()) {
    chain_writer.join();
    if (chain_wire_error) std::rethrow_exception(chain_wire_error);
    built.plan.mutable_chains()->Swap(chain_wire.mutable_chains());
    built.plan.mutable_single_facility_dependencies()->Swap(chain_wire.mutable_single_facility_dependencies());
  } else {
    AddChainPlan(snapshot, built.chains, built.plan);
  }
  ended(PlanPhase::kChainWire);
  std::vector<std::string> moved = MovedChains(previous ? *previous : v1::Plan(), built.plan);
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

}  // namespace geodesic::pathcomp
