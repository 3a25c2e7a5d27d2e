#include "pathcomp/solver/plan_builder.h"

#include <gtest/gtest.h>

#include <optional>
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

// As the planner builds them: each plan given the one before and the chain
// cache (re-placed on the chain thread while the allocation runs on the
// primaries), after links went down.
TEST(PlanBuilderTest, OneThreadAndTwoBuildTheSamePlansInSequence) {
  Snapshot snapshot = WanSnapshot();
  ElephantAllocator one_allocator(0.1), two_allocator(0.1);
  ChainPlanCache one_cache, two_cache;
  std::optional<BuiltPlan> one_before, two_before;
  for (int step = 0; step < 3; ++step) {
    PlanStamp stamp;
    stamp.generation = static_cast<uint64_t>(step + 1);
    BuiltPlan one = BuildPlan(snapshot, stamp, one_allocator, one_before ? &one_before->plan : nullptr, &one_cache,
                              {}, 1);
    BuiltPlan two = BuildPlan(snapshot, stamp, two_allocator, two_before ? &two_before->plan : nullptr, &two_cache,
                              {}, 2);
    EXPECT_EQ(one.plan.chains_size(), 60);
    EXPECT_EQ(one.plan.SerializeAsString(), two.plan.SerializeAsString()) << "plan " << step;
    EXPECT_TRUE(one_cache.plan == two_cache.plan) << "plan " << step;
    one_before = std::move(one);
    two_before = std::move(two);
    // A link on some chain's primary goes down: the next plan re-places chains.
    const ChainPlan& chains = one_cache.plan;
    ASSERT_FALSE(chains.primary.empty());
    const std::vector<int> links = chains.primary[static_cast<size_t>(step * 7) % chains.primary.size()].Links();
    ASSERT_FALSE(links.empty());
    v1::LinkHealth down;
    down.set_state(v1::OPER_STATE_DOWN);
    auto next = snapshot.WithLinkHealth({{snapshot.link_id(links.front()), down}});
    ASSERT_TRUE(next.ok()) << next.status();
    snapshot = *std::move(next);
  }
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
