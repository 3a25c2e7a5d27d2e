// The simulated automatic drainer on the example backbone: pathcomp's judge
// and policy fed with agents' reports on a drill's clock, the drain
// pre-check as pathcomp makes it, and what the report counts.
#include "sim/drill/auto_drain_sim.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "topology/import.h"

namespace geodesic::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using pathcomp::health::AutoDrainOptions;

class AutoDrainSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* source = std::getenv("GEODESIC_SOURCE_DIR");
    auto topology = topology::ImportTopology(std::string(source ? source : ".") + "/deploy/examples/backbone.yaml");
    ASSERT_TRUE(topology.ok()) << topology.status();
    view_.facilities = topology->facilities;
    view_.nodes = topology->nodes;
    view_.links = topology->links;
    for (auto& link : view_.links) {
      link.mutable_health()->set_state(v1::OPER_STATE_UP);
      link.mutable_health()->set_rtt_us(2 * link.latency_us());
    }
    view_.fabrics = topology->fabrics;
    view_.services = topology->services;
    view_.workloads = topology->workloads;
  }

  // The links as the agents see them with `ids` changed by `change`.
  template <typename Change>
  std::vector<v1::Link> With(const std::set<std::string>& ids, Change change) const {
    std::vector<v1::Link> links = view_.links;
    for (auto& link : links) {
      if (ids.count(link.id())) change(*link.mutable_health());
    }
    return links;
  }
  std::vector<v1::Link> Lossy(const std::set<std::string>& ids) const {
    return With(ids, [](v1::LinkHealth& health) {
      health.set_state(v1::OPER_STATE_DEGRADED);
      health.set_loss_ratio(0.05);
    });
  }

  // Reports `links` and decides at every second of [from_ms, to_ms]; the
  // drain orders, with the time of each.
  std::vector<std::pair<uint64_t, pathcomp::health::DrainOrder>> Run(SimulatedAutoDrainer& drainer,
                                                                      const std::vector<v1::Link>& links,
                                                                      uint64_t from_ms, uint64_t to_ms) {
    std::vector<std::pair<uint64_t, pathcomp::health::DrainOrder>> orders;
    for (uint64_t at = from_ms; at <= to_ms; at += 1000) {
      drainer.Report(links, at);
      for (auto& order : drainer.Decide(at).drain) {
        drainer.Drained(order, drainer.IntentsFor(order, at), at);
        orders.emplace_back(at, std::move(order));
      }
    }
    return orders;
  }

  pathcomp::ModelView view_;
};

TEST_F(AutoDrainSimTest, AddedLatencyIsSlowAgainstThePrewarmedBaselineAndDrainedAfterTheHold) {
  SimulatedAutoDrainer drainer(AutoDrainOptions{.hold_ms = 30'000}, view_.links);
  const auto slow = With({"nyc-lon", "lon-nyc"}, [](v1::LinkHealth& health) { health.set_rtt_us(health.rtt_us() + 60'000); });
  const auto orders = Run(drainer, slow, 1000, 40'000);
  ASSERT_EQ(orders.size(), 1u);
  EXPECT_EQ(orders[0].first, 31'000u);  // confirmed at 1 s, held 30 s
  EXPECT_EQ(orders[0].second.fiber, "lon-nyc|nyc-lon");
  EXPECT_EQ(orders[0].second.verdict, v1::LINK_VERDICT_SLOW);
  EXPECT_THAT(orders[0].second.evidence, HasSubstr("baseline 68.0 ms"));
  EXPECT_FALSE(drainer.quiet());
  ASSERT_EQ(drainer.intents().size(), 2u);
  EXPECT_TRUE(drainer.intents()[0].automatic());
  EXPECT_EQ(drainer.intents()[0].created_at_unix_ms(), kDrillEpochUnixMs + 31'000);
  EXPECT_THAT(drainer.intents()[0].id(), HasSubstr("auto-"));
}

TEST_F(AutoDrainSimTest, OneEndAloneIsSuspectedNeverDrained) {
  SimulatedAutoDrainer drainer(AutoDrainOptions{.hold_ms = 30'000}, view_.links);
  EXPECT_THAT(Run(drainer, Lossy({"nyc-lon"}), 1000, 90'000), IsEmpty());
  EXPECT_FALSE(drainer.quiet());  // a bad link keeps the ticks going
}

TEST_F(AutoDrainSimTest, QuietOnlyWhenNothingIsBadOrDrained) {
  SimulatedAutoDrainer drainer(AutoDrainOptions{.hold_ms = 0, .undrain_hold_ms = 10'000}, view_.links);
  EXPECT_THAT(Run(drainer, view_.links, 1000, 5000), IsEmpty());
  EXPECT_TRUE(drainer.quiet());
  ASSERT_EQ(Run(drainer, Lossy({"nyc-lon", "lon-nyc"}), 6000, 6000).size(), 1u);
  EXPECT_FALSE(drainer.quiet());
  // Healthy again: still drained until the undrain hold, then given back.
  std::vector<pathcomp::health::UndrainOrder> undrains;
  for (uint64_t at = 7000; at <= 20'000 && undrains.empty(); at += 1000) {
    drainer.Report(view_.links, at);
    undrains = drainer.Decide(at).undrain;
    EXPECT_FALSE(drainer.quiet());
  }
  ASSERT_EQ(undrains.size(), 1u);
  drainer.Undrained(undrains[0]);
  EXPECT_THAT(drainer.intents(), IsEmpty());
  drainer.Report(view_.links, 21'000);
  (void)drainer.Decide(21'000);
  EXPECT_TRUE(drainer.quiet());
}

TEST_F(AutoDrainSimTest, ANewLeaderStartsTheHoldAfresh) {
  SimulatedAutoDrainer drainer(AutoDrainOptions{.hold_ms = 30'000}, view_.links);
  const auto lossy = Lossy({"nyc-lon", "lon-nyc"});
  EXPECT_THAT(Run(drainer, lossy, 1000, 20'000), IsEmpty());
  drainer.NewLeader();
  const auto orders = Run(drainer, lossy, 23'000, 60'000);
  ASSERT_EQ(orders.size(), 1u);
  EXPECT_EQ(orders[0].first, 53'000u);  // 30 s after the new leader first saw it
}

TEST_F(AutoDrainSimTest, TenFibersAtOnceFailOpen) {
  SimulatedAutoDrainer drainer(AutoDrainOptions{.hold_ms = 0}, view_.links);
  std::set<std::string> ten;
  for (const auto& link : view_.links) {
    if (link.id() != "iad-ams" && link.id() != "ams-iad" && link.id() != "lon-ams" && link.id() != "ams-lon") {
      ten.insert(link.id());
    }
  }
  ASSERT_EQ(ten.size(), 20u);
  drainer.Report(Lossy(ten), 1000);
  const auto decision = drainer.Decide(1000);
  EXPECT_THAT(decision.drain, IsEmpty());
  ASSERT_EQ(decision.events.size(), 1u);
  EXPECT_EQ(decision.events[0].action(), v1::AutoDrainEvent::ACTION_FAIL_OPEN);
  EXPECT_FALSE(drainer.quiet());
}

TEST_F(AutoDrainSimTest, ThePrecheckRefusesADrainThatCutsAndPassesOneWithADetour) {
  SimulatedAutoDrainer drainer(AutoDrainOptions{}, view_.links);
  v1::Workload& across = view_.workloads.emplace_back();  // the only flow between the continents
  across.set_id("ckpt-iad-lon");
  across.mutable_elephant()->set_src_facility_id("iad");
  across.mutable_elephant()->set_dst_prefix("10.7.0.0/16");
  across.mutable_elephant()->set_demand_gbps(50);
  pathcomp::health::DrainOrder nyc_lon{.fiber = "lon-nyc|nyc-lon", .link_ids = {"lon-nyc", "nyc-lon"}};
  pathcomp::health::DrainOrder iad_ams{.fiber = "ams-iad|iad-ams", .link_ids = {"ams-iad", "iad-ams"}};
  EXPECT_THAT(DrainPrecheck(view_, drainer.IntentsFor(nyc_lon, 1000), 0.1, 1.0), IsEmpty());
  pathcomp::ModelView drained = view_;
  for (const v1::Intent& intent : drainer.IntentsFor(iad_ams, 1000)) drained.intents.push_back(intent);
  const auto refusals = DrainPrecheck(drained, drainer.IntentsFor(nyc_lon, 2000), 0.1, 1.0);
  ASSERT_THAT(refusals, Not(IsEmpty()));
  EXPECT_THAT(refusals[0], HasSubstr("workload ckpt-iad-lon would lose its last path"));
}

TEST(AutoDrainReportTest, CountsActionsAndMeasuresGrayLoadOnlyWithADrainedDegradedLink) {
  v1::DrillAutoDrain report;
  AddAutoDrainAction({.at_ms = 41'000, .action = v1::AutoDrainEvent::ACTION_DRAINED, .link_ids = {"a-b", "b-a"},
                      .after_event_index = 0, .after_event = "degrade link a-b"},
                     report);
  AddAutoDrainAction({.at_ms = 42'000, .action = v1::AutoDrainEvent::ACTION_REFUSED}, report);
  AddAutoDrainAction({.at_ms = 43'000, .action = v1::AutoDrainEvent::ACTION_FAIL_OPEN}, report);
  EXPECT_EQ(report.drains(), 1u);
  EXPECT_EQ(report.refusals(), 1u);
  EXPECT_TRUE(report.failed_open());
  EXPECT_EQ(report.actions(0).after_event(), "degrade link a-b");
  EXPECT_THAT(report.actions(0).link_ids(), ElementsAre("a-b", "b-a"));

  v1::Plan plan;
  auto add_load = [&](const std::string& link, double gbps) {
    v1::LinkLoad& load = *plan.mutable_elephants()->add_links();
    load.set_link_id(link);
    load.set_load_gbps(gbps);
  };
  add_load("c-d", 50);
  add_load("x-y", 500);
  v1::Intent drain;
  drain.mutable_drain()->mutable_target()->set_link_id("a-b");
  drain.set_automatic(true);
  AddGrayLoad(plan, {"c-d"}, {drain}, report);  // the drained link is not degraded: not counted
  EXPECT_EQ(report.gray_drained_plans(), 0u);
  AddGrayLoad(plan, {"a-b", "b-a", "c-d"}, {drain}, report);
  EXPECT_EQ(report.gray_drained_plans(), 1u);
  EXPECT_DOUBLE_EQ(report.max_gray_link_load_gbps(), 50);  // c-d is degraded too and still loaded
  EXPECT_EQ(report.max_gray_link(), "c-d");
}

}  // namespace
}  // namespace geodesic::sim
