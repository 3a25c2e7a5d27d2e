// Planned vs measured per hop and the straggler, from synthetic plans,
// link measurements and service reports.
#include "pathcomp/solver/chain_stragglers.h"

#include <gtest/gtest.h>

#include "site_plan/chain_paths.h"

namespace geodesic::pathcomp {
namespace {

constexpr int64_t kNow = 1'000'000'000;

// origin iad -> retriever@chi (iad>chi, back chi>iad) -> model@chi (same
// facility) -> tool@nyc (chi>iad>nyc, back nyc>chi); 82 ms planned in all.
v1::ChainPlan ThreeHopPlan() {
  v1::ChainPlan plan;
  plan.set_workload_id("rag");
  plan.set_latency_budget_us(100'000);
  v1::ChainAssignment& primary = *plan.mutable_primary();
  primary.set_placed(true);
  auto hop = [&](const std::string& service, const std::string& replica, std::vector<std::string> there,
                 std::vector<std::string> back, uint64_t rtt_us, uint64_t service_us) {
    v1::ChainHop& h = *primary.add_hops();
    h.set_service_id(service);
    h.set_replica_facility_id(replica);
    h.set_path_there(site_plan::AddChainPath(plan, there));
    h.set_path_back(site_plan::AddChainPath(plan, back));
    h.set_network_rtt_us(rtt_us);
    h.set_service_time_us(service_us);
  };
  hop("retriever", "chi", {"iad", "chi"}, {"chi", "iad"}, 20'000, 5'000);
  hop("model", "chi", {}, {}, 0, 30'000);
  hop("tool", "nyc", {"chi", "iad", "nyc"}, {"nyc", "chi"}, 25'000, 2'000);
  return plan;
}

// Links measured exactly as planned: iad<>chi 10 ms one way each (20 ms RTT),
// iad>nyc 5 ms, nyc>chi 10 ms.
std::vector<MeasuredLink> AsPlanned() {
  return {{.id = "iad-chi", .src_facility_id = "iad", .dst_facility_id = "chi", .rtt_us = 20'000, .usable = true},
          {.id = "chi-iad", .src_facility_id = "chi", .dst_facility_id = "iad", .rtt_us = 20'000, .usable = true},
          {.id = "iad-nyc", .src_facility_id = "iad", .dst_facility_id = "nyc", .rtt_us = 10'000, .usable = true},
          {.id = "nyc-chi", .src_facility_id = "nyc", .dst_facility_id = "chi", .rtt_us = 20'000, .usable = true}};
}

HopReport Report(uint32_t hop, const std::string& service, const std::string& facility, uint64_t latency_us,
                 uint64_t rtt_us = 0, int64_t age_ms = 1000) {
  HopReport report;
  report.replica_facility_id = facility;
  report.report.set_workload_id("rag");
  report.report.set_hop(hop);
  report.report.set_service_id(service);
  report.report.set_service_latency_us(latency_us);
  report.report.set_network_rtt_us(rtt_us);
  report.report.set_calls(10);
  report.report.set_window_ms(10'000);
  report.report.set_received_at_unix_ms(kNow - age_ms);
  return report;
}

TEST(ChainStragglersTest, AsPlannedHasNoStragglerAndMeasuresNetworkByLinkProbes) {
  ChainLatencyExplainer explainer(AsPlanned(), StragglerRules{});
  const v1::ChainExplanation explained = explainer.Explain(ThreeHopPlan(), {}, kNow);
  ASSERT_EQ(explained.hops_size(), 3);
  EXPECT_FALSE(explained.has_straggler());
  EXPECT_EQ(explained.deviating_size(), 0);
  const v1::HopLatency& first = explained.hops(0);
  EXPECT_EQ(first.network_source(), v1::NETWORK_SOURCE_LINK_PROBES);
  EXPECT_EQ(first.measured_network_rtt_us(), 20'000u);
  EXPECT_EQ(first.network_deviation_us(), 0);
  EXPECT_EQ(std::vector<std::string>(first.network_link_ids().begin(), first.network_link_ids().end()),
            (std::vector<std::string>{"iad-chi", "chi-iad"}));
  EXPECT_FALSE(first.service_measured());
  EXPECT_EQ(explained.hops(1).network_source(), v1::NETWORK_SOURCE_LOCAL);
  EXPECT_EQ(explained.hops(2).measured_network_rtt_us(), 25'000u);  // 10 + 5 ms there, 10 ms back
  EXPECT_EQ(explained.planned_total_us(), 82'000u);
  EXPECT_EQ(explained.measured_total_us(), 82'000u);  // unmeasured service times count as planned
  EXPECT_FALSE(explained.fully_measured());
  EXPECT_TRUE(explained.measured_within_budget());
}

TEST(ChainStragglersTest, ASlowLinkMakesItsHopTheNetworkStraggler) {
  std::vector<MeasuredLink> links = AsPlanned();
  links[0].rtt_us = 48'400;  // iad>chi: +14.2 ms one way
  ChainLatencyExplainer explainer(links, StragglerRules{});
  const v1::ChainExplanation explained = explainer.Explain(ThreeHopPlan(), {}, kNow);
  ASSERT_TRUE(explained.has_straggler());
  EXPECT_EQ(explained.straggler().hop(), 0u);
  EXPECT_EQ(explained.straggler().service_id(), "retriever");
  EXPECT_EQ(explained.straggler().replica_facility_id(), "chi");
  EXPECT_EQ(explained.straggler().component(), v1::LATENCY_COMPONENT_NETWORK);
  EXPECT_EQ(explained.straggler().network_source(), v1::NETWORK_SOURCE_LINK_PROBES);
  EXPECT_EQ(explained.straggler().deviation_us(), 14'200);
  EXPECT_NEAR(explained.straggler().deviation_ratio(), 0.71, 1e-9);
  EXPECT_TRUE(explained.straggler().chain_straggler());
  EXPECT_EQ(explained.hops(2).network_deviation_us(), 0);  // chi>iad>nyc, nyc>chi: not iad>chi
  EXPECT_EQ(explained.measured_total_us(), 82'000u + 14'200u);
}

TEST(ChainStragglersTest, AServiceReportMeasuresServiceAndCallerRtt) {
  ChainLatencyExplainer explainer(AsPlanned(), StragglerRules{});
  const v1::ChainExplanation explained =
      explainer.Explain(ThreeHopPlan(), {Report(1, "model", "chi", 45'000), Report(2, "tool", "nyc", 2'100, 26'000)},
                        kNow);
  ASSERT_TRUE(explained.has_straggler());
  EXPECT_EQ(explained.straggler().hop(), 1u);
  EXPECT_EQ(explained.straggler().component(), v1::LATENCY_COMPONENT_SERVICE);
  EXPECT_EQ(explained.straggler().deviation_us(), 15'000);
  const v1::HopLatency& tool = explained.hops(2);
  EXPECT_EQ(tool.network_source(), v1::NETWORK_SOURCE_SERVICE_REPORT);  // preferred over link probes
  EXPECT_EQ(tool.measured_network_rtt_us(), 26'000u);
  // The links the caller's measurement crossed, for the gray-failure judge's path evidence.
  EXPECT_EQ(std::vector<std::string>(tool.network_link_ids().begin(), tool.network_link_ids().end()),
            (std::vector<std::string>{"chi-iad", "iad-nyc", "nyc-chi"}));
  EXPECT_EQ(tool.report_calls(), 10u);
  EXPECT_EQ(tool.report_age_ms(), 1000);
  // +1 ms on a 25 ms plan is under the floor (10 %: 2.5 ms), as is the tool's +0.1 ms.
  EXPECT_EQ(explained.deviating_size(), 1);
}

TEST(ChainStragglersTest, TheNoiseFloorIsTheLargerOfAbsoluteAndRelative) {
  StragglerRules rules;
  rules.min_deviation_us = 1'000;
  rules.min_deviation_ratio = 0.1;
  ChainLatencyExplainer explainer(AsPlanned(), rules);
  // model: planned 30 ms; +2.9 ms is under 10 % (3 ms), +3.1 ms over.
  EXPECT_FALSE(explainer.Explain(ThreeHopPlan(), {Report(1, "model", "chi", 32'900)}, kNow).has_straggler());
  EXPECT_TRUE(explainer.Explain(ThreeHopPlan(), {Report(1, "model", "chi", 33'100)}, kNow).has_straggler());
  // retriever: planned 5 ms; +0.9 ms is 18 % but under 1 ms.
  EXPECT_FALSE(explainer.Explain(ThreeHopPlan(), {Report(0, "retriever", "chi", 5'900)}, kNow).has_straggler());
  EXPECT_TRUE(explainer.Explain(ThreeHopPlan(), {Report(0, "retriever", "chi", 6'100)}, kNow).has_straggler());
}

TEST(ChainStragglersTest, FasterThanPlannedIsNeverAStraggler) {
  std::vector<MeasuredLink> links = AsPlanned();
  links[0].rtt_us = 2'000;
  ChainLatencyExplainer explainer(links, StragglerRules{});
  const v1::ChainExplanation explained =
      explainer.Explain(ThreeHopPlan(), {Report(1, "model", "chi", 1'000)}, kNow);
  EXPECT_FALSE(explained.has_straggler());
  EXPECT_EQ(explained.hops(1).service_deviation_us(), -29'000);
  EXPECT_NEAR(explained.hops(1).service_deviation_ratio(), -29.0 / 30.0, 1e-9);
  EXPECT_LT(explained.hops(0).network_deviation_us(), 0);
}

TEST(ChainStragglersTest, OldReportsAndOtherReplicasAreNotUsed) {
  ChainLatencyExplainer explainer(AsPlanned(), StragglerRules{.report_max_age_ms = 60'000});
  const v1::ChainExplanation explained = explainer.Explain(
      ThreeHopPlan(),
      {Report(1, "model", "chi", 90'000, 0, /*age_ms=*/60'001), Report(2, "tool", "iad", 90'000),
       Report(0, "tool", "chi", 90'000)},
      kNow);
  EXPECT_FALSE(explained.has_straggler());
  for (const v1::HopLatency& hop : explained.hops()) EXPECT_FALSE(hop.service_measured()) << hop.hop();
  // Exactly at the limit is still fresh; a report from the future is age 0.
  EXPECT_TRUE(explainer.Explain(ThreeHopPlan(), {Report(1, "model", "chi", 90'000, 0, 60'000)}, kNow).has_straggler());
  const auto future = explainer.Explain(ThreeHopPlan(), {Report(1, "model", "chi", 90'000, 0, -5'000)}, kNow);
  EXPECT_EQ(future.hops(1).report_age_ms(), 0);
}

TEST(ChainStragglersTest, TheNewestFreshReportWins) {
  ChainLatencyExplainer explainer(AsPlanned(), StragglerRules{});
  const auto explained = explainer.Explain(
      ThreeHopPlan(), {Report(1, "model", "chi", 90'000, 0, 5'000), Report(1, "model", "chi", 31'000, 0, 1'000)}, kNow);
  EXPECT_EQ(explained.hops(1).measured_service_latency_us(), 31'000u);
  EXPECT_FALSE(explained.has_straggler());
}

TEST(ChainStragglersTest, ParallelLinksTakeTheUsableOneWithTheLowestRtt) {
  std::vector<MeasuredLink> links = AsPlanned();
  links[0].rtt_us = 60'000;
  links.push_back({.id = "iad-chi-2", .src_facility_id = "iad", .dst_facility_id = "chi", .rtt_us = 21'000, .usable = true});
  links.push_back({.id = "iad-chi-3", .src_facility_id = "iad", .dst_facility_id = "chi", .rtt_us = 1'000, .usable = false});
  links.push_back({.id = "iad-chi-4", .src_facility_id = "iad", .dst_facility_id = "chi", .rtt_us = 0, .usable = true});
  ChainLatencyExplainer explainer(links, StragglerRules{});
  const auto explained = explainer.Explain(ThreeHopPlan(), {}, kNow);
  EXPECT_EQ(explained.hops(0).network_link_ids(0), "iad-chi-2");
  EXPECT_EQ(explained.hops(0).measured_network_rtt_us(), 20'500u);
  EXPECT_FALSE(explained.has_straggler());
}

TEST(ChainStragglersTest, AnUnmeasuredPairLeavesTheNetworkUnmeasured) {
  std::vector<MeasuredLink> links = AsPlanned();
  links[1].usable = false;  // chi>iad down: hop 0's way back and hop 2's way there
  ChainLatencyExplainer explainer(links, StragglerRules{});
  const auto explained = explainer.Explain(ThreeHopPlan(), {}, kNow);
  EXPECT_EQ(explained.hops(0).network_source(), v1::NETWORK_SOURCE_NONE);
  EXPECT_EQ(explained.hops(0).network_link_ids_size(), 0);
  EXPECT_EQ(explained.hops(2).network_source(), v1::NETWORK_SOURCE_NONE);
  EXPECT_EQ(explained.measured_total_us(), explained.planned_total_us());
}

TEST(ChainStragglersTest, TiesGoToTheLowerHopThenNetworkBeforeService) {
  std::vector<MeasuredLink> links = AsPlanned();
  links[0].rtt_us = 30'000;  // hop 0 network +5 ms
  ChainLatencyExplainer explainer(links, StragglerRules{});
  const auto explained = explainer.Explain(
      ThreeHopPlan(), {Report(0, "retriever", "chi", 10'000), Report(2, "tool", "nyc", 7'000)}, kNow);
  ASSERT_EQ(explained.deviating_size(), 3);
  EXPECT_EQ(explained.deviating(0).hop(), 0u);
  EXPECT_EQ(explained.deviating(0).component(), v1::LATENCY_COMPONENT_NETWORK);
  EXPECT_EQ(explained.deviating(1).hop(), 0u);
  EXPECT_EQ(explained.deviating(1).component(), v1::LATENCY_COMPONENT_SERVICE);
  EXPECT_EQ(explained.deviating(2).hop(), 2u);
  EXPECT_TRUE(explained.deviating(0).chain_straggler());
  EXPECT_FALSE(explained.deviating(1).chain_straggler());
}

TEST(ChainStragglersTest, AnUnplacedChainHasNoHops) {
  v1::ChainPlan plan;
  plan.set_workload_id("cut");
  plan.mutable_primary()->set_reason("service x has no reachable replica");
  ChainLatencyExplainer explainer(AsPlanned(), StragglerRules{});
  const auto explained = explainer.Explain(plan, {}, kNow);
  EXPECT_FALSE(explained.placed());
  EXPECT_EQ(explained.reason(), "service x has no reachable replica");
  EXPECT_EQ(explained.hops_size(), 0);
  EXPECT_FALSE(explained.has_straggler());
}

TEST(ChainStragglersTest, WorstHopsOrdersAcrossChainsAndLimits) {
  std::vector<MeasuredLink> links = AsPlanned();
  links[0].rtt_us = 40'000;  // hop 0 network +10 ms
  ChainLatencyExplainer explainer(links, StragglerRules{});
  v1::ChainPlan other = ThreeHopPlan();
  other.set_workload_id("agent");
  std::vector<v1::ChainExplanation> chains = {
      explainer.Explain(ThreeHopPlan(), {Report(1, "model", "chi", 60'000)}, kNow),  // +30 ms service, +10 ms network
      explainer.Explain(other, {}, kNow)};                                           // +10 ms network
  const std::vector<v1::Straggler> worst = WorstHops(chains, 10);
  ASSERT_EQ(worst.size(), 3u);
  EXPECT_EQ(worst[0].workload_id(), "rag");
  EXPECT_EQ(worst[0].deviation_us(), 30'000);
  EXPECT_TRUE(worst[0].chain_straggler());
  EXPECT_EQ(worst[1].workload_id(), "agent");  // equal excess: by workload id
  EXPECT_TRUE(worst[1].chain_straggler());
  EXPECT_EQ(worst[2].workload_id(), "rag");
  EXPECT_FALSE(worst[2].chain_straggler());
  EXPECT_EQ(WorstHops(chains, 1).size(), 1u);
  EXPECT_TRUE(WorstHops(chains, 0).empty());
}

}  // namespace
}  // namespace geodesic::pathcomp
