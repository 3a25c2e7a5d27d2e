// The relay's events between two views: snapshot, reroutes with a cause the
// caller may see, budget crossings, dependencies, rate-limited measurements.
#include "pathcomp/service/relay_diff.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pathcomp/service/tenant_view.h"
#include "tests/pathcomp/relay_fixture.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using namespace relay_testing;  // NOLINT: test fixture
using std::chrono::milliseconds;

RelayScope TenantScope(const std::string& tenant) {
  tls::Identity caller;
  caller.kind = tls::Identity::Kind::kTenant;
  caller.name = tenant;
  return ScopeFor(caller, {}).value();
}

RelayScope OperatorScope() {
  tls::Identity caller;
  caller.kind = tls::Identity::Kind::kOperator;
  caller.name = "olga";
  caller.role = tls::Role::kViewer;
  return ScopeFor(caller, {}).value();
}

std::vector<v1::RelayEvent::KindCase> Kinds(const std::vector<v1::RelayEvent>& events) {
  std::vector<v1::RelayEvent::KindCase> kinds;
  for (const auto& event : events) kinds.push_back(event.kind_case());
  return kinds;
}

std::string Text(const std::vector<v1::RelayEvent>& events) {
  std::string text;
  for (const auto& event : events) text += event.DebugString();
  return text;
}

class RelayDiffTest : public ::testing::Test {
 protected:
  RelayDiff::View View(const RelayScope& scope, const v1::Plan* plan, const std::vector<v1::Link>& links,
                       const std::vector<v1::Workload>& workloads = Workloads()) {
    return BuildTenantView(scope, plan, links, workloads);
  }
  RelayDiff::Clock::time_point At(int ms) { return start_ + milliseconds(ms); }

  const RelayDiff::Clock::time_point start_ = RelayDiff::Clock::now();
  const v1::Plan plan_ = MakePlan();
  const v1::Plan rerouted_ = MakePlan(/*ab_down=*/true);
};

TEST_F(RelayDiffTest, SnapshotIsOneEventPerWorkloadThenDone) {
  RelayDiff diff(false);
  const auto events = diff.Snapshot(View(TenantScope("beta"), &plan_, Links()), 1, false, 77, At(0));
  EXPECT_THAT(Kinds(events), ElementsAre(v1::RelayEvent::kWorkload, v1::RelayEvent::kWorkload,
                                         v1::RelayEvent::kSnapshotDone));
  EXPECT_EQ(events[0].workload().workload_id(), "beta-chain");
  EXPECT_EQ(events[2].snapshot_done().workloads(), 2u);
  EXPECT_EQ(events[2].snapshot_done().plan_generation(), 1u);
  EXPECT_FALSE(events[2].snapshot_done().resync());
  EXPECT_EQ(events[2].at_unix_ms(), 77);
  // Nothing changed: nothing to tell.
  EXPECT_THAT(diff.Update(View(TenantScope("beta"), &plan_, Links()), {.generation = 1}, Links(), 78, At(5000)),
              IsEmpty());
}

TEST_F(RelayDiffTest, ARerouteCarriesOldAndNewPathsAndATenantSafeCause) {
  std::vector<v1::Link> links = Links();
  RelayDiff tenant(false);
  tenant.Snapshot(View(TenantScope("acme"), &plan_, links), 1, false, 0, At(0));
  links[0].mutable_health()->set_state(v1::OPER_STATE_DOWN);  // l-ab
  const RelayPlanInfo plan{.generation = 2, .reason = rerouted_.reason()};
  const auto events = tenant.Update(View(TenantScope("acme"), &rerouted_, links), plan, links, 0, At(100));
  ASSERT_THAT(Kinds(events), ElementsAre(v1::RelayEvent::kReroute));
  const v1::RelayReroute& reroute = events[0].reroute();
  EXPECT_EQ(reroute.workload_id(), "acme-flow");
  EXPECT_EQ(reroute.generation(), 2u);
  ASSERT_EQ(reroute.previous().paths_size(), 2);
  EXPECT_EQ(reroute.previous().paths(0).hops(0).link_id(), "l-ab");
  ASSERT_EQ(reroute.current().paths_size(), 1);
  EXPECT_THAT(reroute.current().paths(0).facility_ids(), ElementsAre("a", "c", "d"));
  // The cause names the link of acme's own old path, and not the plan's reason,
  // which names beta's workload and an operator.
  EXPECT_EQ(reroute.cause(), "link l-ab down");
  EXPECT_THAT(Text(events), Not(HasSubstr("beta")));
  EXPECT_THAT(Text(events), Not(HasSubstr("alice")));

  // An operator gets the plan's reason verbatim.
  std::vector<v1::Link> up = Links();
  RelayDiff operators(true);
  operators.Snapshot(View(OperatorScope(), &plan_, up), 1, false, 0, At(0));
  const auto seen = operators.Update(View(OperatorScope(), &rerouted_, links), plan, links, 0, At(100));
  bool found = false;
  for (const auto& event : seen) {
    if (event.has_reroute() && event.reroute().workload_id() == "acme-flow") {
      found = true;
      EXPECT_EQ(event.reroute().cause(), rerouted_.reason());
    }
  }
  EXPECT_TRUE(found) << Text(seen);
}

TEST_F(RelayDiffTest, ADrainedLinkIsNamedAsTheCause) {
  std::vector<v1::Link> links = Links();
  RelayDiff diff(false);
  diff.Snapshot(View(TenantScope("acme"), &plan_, links), 1, false, 0, At(0));
  links[0].set_admin_state(v1::ADMIN_STATE_DRAINED);
  const auto events = diff.Update(View(TenantScope("acme"), &rerouted_, links), {.generation = 2}, links, 0, At(10));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().reroute().cause(), "link l-ab drained");
}

TEST_F(RelayDiffTest, MeasurementsAreToldAtMostOncePerIntervalAndOnlyWhenTheyMatter) {
  std::vector<v1::Link> links = Links();
  RelayDiff diff(false, {.measurement_interval = milliseconds(1000)});
  const RelayScope acme = TenantScope("acme");
  diff.Snapshot(View(acme, &plan_, links), 1, false, 0, At(0));
  // 1500 -> 1510 us one way: below the noise floor.
  links[0].mutable_health()->set_rtt_us(3020);
  EXPECT_THAT(diff.Update(View(acme, &plan_, links), {.generation = 1}, links, 0, At(2000)), IsEmpty());
  // 2000 -> 2600 us on l-bd: worth telling, but not within a second of the snapshot.
  links[1].mutable_health()->set_rtt_us(5200);
  EXPECT_THAT(diff.Update(View(acme, &plan_, links), {.generation = 1}, links, 0, At(2000)).size(), 1u);
  RelayDiff fresh(false, {.measurement_interval = milliseconds(1000)});
  fresh.Snapshot(View(acme, &plan_, Links()), 1, false, 0, At(0));
  EXPECT_THAT(fresh.Update(View(acme, &plan_, links), {.generation = 1}, links, 0, At(500)), IsEmpty());
  const auto told = fresh.Update(View(acme, &plan_, links), {.generation = 1}, links, 0, At(1000));
  ASSERT_THAT(Kinds(told), ElementsAre(v1::RelayEvent::kMeasurement));
  const v1::RelayMeasurement& measurement = told[0].measurement();
  EXPECT_EQ(measurement.workload_id(), "acme-flow");
  ASSERT_EQ(measurement.changed_hops_size(), 1);
  EXPECT_EQ(measurement.changed_hops(0).link_id(), "l-bd");
  EXPECT_EQ(measurement.changed_hops(0).latency_us(), 2600u);
  EXPECT_EQ(measurement.current().paths(0).total_latency_us(), 1510u + 2600u);
  // A link's state changing is told at once, rate limit or not.
  links[2].mutable_health()->set_state(v1::OPER_STATE_DEGRADED);  // l-ac
  const auto degraded = fresh.Update(View(acme, &plan_, links), {.generation = 1}, links, 0, At(1001));
  ASSERT_THAT(Kinds(degraded), ElementsAre(v1::RelayEvent::kMeasurement));
  EXPECT_EQ(degraded[0].measurement().changed_hops(0).state(), v1::OPER_STATE_DEGRADED);
  // Told once: the same values again are nothing new.
  EXPECT_THAT(fresh.Update(View(acme, &plan_, links), {.generation = 1}, links, 0, At(3000)), IsEmpty());
  // A link acme does not use changing is never told to acme.
  links[5].mutable_health()->set_rtt_us(99'000);  // l-ce, beta's
  links[4].mutable_health()->set_loss_ratio(0.5);  // l-ba, beta's
  EXPECT_THAT(fresh.Update(View(acme, &plan_, links), {.generation = 1}, links, 0, At(9000)), IsEmpty());
}

TEST_F(RelayDiffTest, BudgetCrossingsBothWays) {
  std::vector<v1::Link> links = Links();
  const RelayScope beta = TenantScope("beta");
  RelayDiff diff(false);
  diff.Snapshot(View(beta, &plan_, links), 1, false, 0, At(0));
  links[4].mutable_health()->set_rtt_us(20'000);  // l-ba: 10 ms one way
  const auto over = diff.Update(View(beta, &plan_, links), {.generation = 1}, links, 0, At(5000));
  ASSERT_FALSE(over.empty());
  EXPECT_TRUE(over[0].has_budget()) << Text(over);
  EXPECT_TRUE(over[0].budget().over_budget());
  EXPECT_EQ(over[0].budget().workload_id(), "beta-chain");
  EXPECT_EQ(over[0].budget().measured_latency_us(), 1500u + 10'000u + 3000u);
  EXPECT_EQ(over[0].budget().latency_budget_us(), 10'000u);
  links[4].mutable_health()->set_rtt_us(2600);
  const auto back = diff.Update(View(beta, &plan_, links), {.generation = 1}, links, 0, At(10'000));
  ASSERT_FALSE(back.empty());
  EXPECT_TRUE(back[0].has_budget());
  EXPECT_FALSE(back[0].budget().over_budget());
}

TEST_F(RelayDiffTest, DependenciesAppearAndGo) {
  const RelayScope beta = TenantScope("beta");
  v1::Plan without = plan_;
  without.clear_single_facility_dependencies();
  RelayDiff diff(false);
  diff.Snapshot(View(beta, &without, Links()), 1, false, 0, At(0));
  const auto appeared = diff.Update(View(beta, &plan_, Links()), {.generation = 1}, Links(), 0, At(10));
  ASSERT_THAT(Kinds(appeared), ElementsAre(v1::RelayEvent::kDependency));
  EXPECT_TRUE(appeared[0].dependency().appeared());
  EXPECT_EQ(appeared[0].dependency().dependency().facility_id(), "b");
  const auto gone = diff.Update(View(beta, &without, Links()), {.generation = 1}, Links(), 0, At(20));
  ASSERT_THAT(Kinds(gone), ElementsAre(v1::RelayEvent::kDependency));
  EXPECT_FALSE(gone[0].dependency().appeared());
}

TEST_F(RelayDiffTest, WorkloadsComeAndGo) {
  const RelayScope acme = TenantScope("acme");
  RelayDiff diff(false);
  std::vector<v1::Workload> workloads = Workloads();
  diff.Snapshot(View(acme, &plan_, Links(), workloads), 1, false, 0, At(0));
  workloads.push_back(Elephant("acme-two", "acme", "c", "10.4.0.0/16"));
  const auto added = diff.Update(View(acme, &plan_, Links(), workloads), {.generation = 1}, Links(), 0, At(10));
  ASSERT_THAT(Kinds(added), ElementsAre(v1::RelayEvent::kWorkload));
  EXPECT_EQ(added[0].workload().workload_id(), "acme-two");
  workloads.back().set_tenant("beta");  // no longer acme's: gone, as if removed
  const auto removed = diff.Update(View(acme, &plan_, Links(), workloads), {.generation = 1}, Links(), 0, At(20));
  ASSERT_THAT(Kinds(removed), ElementsAre(v1::RelayEvent::kRemoved));
  EXPECT_EQ(removed[0].removed().workload_id(), "acme-two");
}

// acme's flow had no path; the next plan puts it on l-ab, which beta's chain
// already uses: acme learns of its own path and nothing of beta's traffic.
TEST_F(RelayDiffTest, MovingOntoASharedLinkLeaksNothingOfItsOtherTraffic) {
  const RelayScope acme = TenantScope("acme");
  v1::Plan unrouted = plan_;
  unrouted.mutable_sites(0)->clear_routes();
  RelayDiff diff(false);
  const auto snapshot = diff.Snapshot(View(acme, &unrouted, Links()), 1, false, 0, At(0));
  EXPECT_FALSE(snapshot[0].workload().routed());
  v1::Plan routed = plan_;
  routed.set_generation(2);
  std::vector<v1::Link> links = Links();
  links[0].mutable_health()->set_utilization_ratio(0.93);  // others' load on l-ab
  const auto events = diff.Update(View(acme, &routed, links), {.generation = 2, .reason = routed.reason()}, links,
                                  0, At(100));
  ASSERT_THAT(Kinds(events), ElementsAre(v1::RelayEvent::kReroute));
  EXPECT_EQ(events[0].reroute().cause(), "replanned");
  EXPECT_TRUE(events[0].reroute().current().routed());
  const std::string text = Text(events);
  for (const char* foreign : {"beta", "svc", "l-ba", "l-ce", "0.93", "utilization", "started"}) {
    EXPECT_THAT(text, Not(HasSubstr(foreign))) << foreign;
  }
}

}  // namespace
}  // namespace geodesic::pathcomp
