#include "pathcomp/solver/plan_builder.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "pathcomp/solver/snapshot.h"
#include "topology/synthetic_wan.h"

namespace geodesic::pathcomp {
namespace {

// A generated WAN with elephant flows and agent chains, every link up.
Snapshot WanSnapshot() {
  topology::SyntheticWanOptions options;
  options.seed = 5;
  options.facilities = 40;
  options.elephant_flows = 300;
  options.services = 6;
  options.chains = 60;
  auto wan = topology::GenerateSyntheticWan(options);
  EXPECT_TRUE(wan.ok()) << wan.status();
  ModelView view;
  view.facilities = wan->facilities;
  view.nodes = wan->nodes;
  view.links = wan->links;
  for (auto& link : view.links) {
    link.mutable_health()->set_state(v1::OPER_STATE_UP);
    link.mutable_health()->set_rtt_us(2 * link.latency_us());
  }
  view.services = wan->services;
  view.workloads = wan->workloads;
  view.fabrics = wan->fabrics;
  return Snapshot::Build(view);
}

// The chains' wire form written on a second thread lands where the single
// thread writes it: the two plans are equal byte for byte, and both carry
// routes, chains and the allocation.
TEST(PlanBuilderTest, OneThreadAndTwoBuildTheSamePlan) {
  const Snapshot snapshot = WanSnapshot();
  PlanStamp stamp;
  stamp.generation = 4;
  ElephantAllocator one_allocator(0.1), two_allocator(0.1);
  const BuiltPlan one = BuildPlan(snapshot, stamp, one_allocator, nullptr, nullptr, {}, 1);
  const BuiltPlan two = BuildPlan(snapshot, stamp, two_allocator, nullptr, nullptr, {}, 2);
  EXPECT_TRUE(one.problems.empty());
  EXPECT_EQ(one.plan.sites_size(), snapshot.facility_count());
  EXPECT_EQ(one.plan.chains_size(), 60);
  EXPECT_GT(one.plan.elephants().demand_gbps(), 0);
  EXPECT_EQ(one.plan.SerializeAsString(), two.plan.SerializeAsString());
}

// The observer hears every phase once, in order, whatever the threads.
TEST(PlanBuilderTest, PhasesEndInOrderOnTheCallingThread) {
  const Snapshot snapshot = WanSnapshot();
  for (const int threads : {1, 2}) {
    ElephantAllocator allocator(0.1);
    std::vector<PlanPhase> phases;
    const std::thread::id caller = std::this_thread::get_id();
    bool on_caller = true;
    BuildPlan(snapshot, PlanStamp{}, allocator, nullptr, nullptr,
              [&](PlanPhase phase) {
                phases.push_back(phase);
                on_caller &= std::this_thread::get_id() == caller;
              },
              threads);
    EXPECT_EQ(phases, (std::vector<PlanPhase>{PlanPhase::kChains, PlanPhase::kElephants, PlanPhase::kWcmp,
                                              PlanPhase::kRoutes, PlanPhase::kProtection, PlanPhase::kChainWire,
                                              PlanPhase::kMoved}))
        << threads << " thread(s)";
    EXPECT_TRUE(on_caller) << threads << " thread(s)";
  }
}

}  // namespace
}  // namespace geodesic::pathcomp
