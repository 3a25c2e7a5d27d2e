// Who may watch what through the relay, and the view each caller gets: its
// own workloads' paths hop by hop, nothing of other tenants'.
#include "pathcomp/service/tenant_view.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/pathcomp/relay_fixture.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::UnorderedElementsAre;
using namespace relay_testing;  // NOLINT: test fixture

tls::Identity Caller(tls::Identity::Kind kind, const std::string& name, tls::Role role = tls::Role::kNone) {
  tls::Identity identity;
  identity.kind = kind;
  identity.name = name;
  identity.role = role;
  identity.spiffe_id = "spiffe://geodesic/x/" + name;
  return identity;
}

const tls::Identity kAcme = Caller(tls::Identity::Kind::kTenant, "acme");
const tls::Identity kViewer = Caller(tls::Identity::Kind::kOperator, "olga", tls::Role::kViewer);

v1::RelayWatchRequest Request(std::vector<std::string> ids, const std::string& tenant = "") {
  v1::RelayWatchRequest request;
  for (auto& id : ids) request.add_workload_ids(id);
  request.set_tenant(tenant);
  return request;
}

std::vector<std::string> Ids(const std::map<std::string, v1::RelayWorkload>& view) {
  std::vector<std::string> ids;
  for (const auto& [id, workload] : view) ids.push_back(id);
  return ids;
}

std::vector<std::string> LinkIds(const v1::RelayPath& path) {
  std::vector<std::string> ids;
  for (const auto& hop : path.hops()) ids.push_back(hop.link_id());
  return ids;
}

TEST(RelayScopeTest, TenantsAndOperatorsMayWatchOthersMayNot) {
  auto tenant = ScopeFor(kAcme, Request({}));
  ASSERT_TRUE(tenant.ok()) << tenant.status();
  EXPECT_EQ(tenant->tenant, "acme");
  EXPECT_FALSE(tenant->all_tenants);
  EXPECT_FALSE(tenant->operator_view);
  EXPECT_TRUE(ScopeFor(kAcme, Request({}, "acme")).ok());  // naming itself is fine

  auto viewer = ScopeFor(kViewer, Request({}));
  ASSERT_TRUE(viewer.ok()) << viewer.status();
  EXPECT_TRUE(viewer->all_tenants);
  EXPECT_TRUE(viewer->operator_view);
  auto filtered = ScopeFor(kViewer, Request({}, "beta"));
  ASSERT_TRUE(filtered.ok());
  EXPECT_FALSE(filtered->all_tenants);
  EXPECT_EQ(filtered->tenant, "beta");

  for (auto kind : {tls::Identity::Kind::kAgent, tls::Identity::Kind::kRouterd, tls::Identity::Kind::kPathcomp,
                    tls::Identity::Kind::kEtcd}) {
    auto refused = ScopeFor(Caller(kind, "x"), Request({}));
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied) << tls::KindName(kind);
  }
  auto other_tenant = ScopeFor(kAcme, Request({}, "beta"));
  EXPECT_EQ(other_tenant.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(other_tenant.status().message(), HasSubstr("only its own workloads"));
}

TEST(RelayScopeTest, RequestsAreValidated) {
  auto bad = [](const v1::RelayWatchRequest& request) { return ScopeFor(kViewer, request).status(); };
  EXPECT_EQ(bad(Request({"Bad Id"})).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad(Request({"ok", "ok"})).message(), HasSubstr("listed twice"));
  EXPECT_THAT(bad(Request({}, "Acme")).message(), HasSubstr("not a valid id"));
  std::vector<std::string> many;
  for (int i = 0; i <= kMaxRelayWorkloadIds; ++i) many.push_back("w" + std::to_string(i));
  EXPECT_THAT(bad(Request(many)).message(), HasSubstr("at most 1000"));
  many.pop_back();
  EXPECT_TRUE(bad(Request(many)).ok());
  // An error quotes the bad id boundedly and escaped.
  const absl::Status long_id = bad(Request({std::string(5000, 'x') + "\n"}));
  EXPECT_LT(long_id.message().size(), 300u);
}

// Asking for another tenant's workload answers exactly as asking for one that
// does not exist: the message differs only in the id asked for.
TEST(RelayScopeTest, AnotherTenantsWorkloadIsIndistinguishableFromNone) {
  const auto workloads = Workloads();
  auto scope_for = [](const std::string& id) { return ScopeFor(kAcme, Request({id})).value(); };
  EXPECT_TRUE(CheckRequestedWorkloads(scope_for("acme-flow"), workloads).ok());
  const absl::Status theirs = CheckRequestedWorkloads(scope_for("beta-flow"), workloads);
  const absl::Status nobodys = CheckRequestedWorkloads(scope_for("gamma-flow"), workloads);
  const absl::Status operators = CheckRequestedWorkloads(scope_for("ops-flow"), workloads);
  for (const absl::Status* status : {&theirs, &nobodys, &operators}) {
    EXPECT_EQ(status->code(), absl::StatusCode::kNotFound);
  }
  EXPECT_EQ(theirs.message(), "unknown workload beta-flow");
  EXPECT_EQ(nobodys.message(), "unknown workload gamma-flow");
  EXPECT_EQ(operators.message(), "unknown workload ops-flow");
  // An operator may name anyone's.
  auto scope = ScopeFor(kViewer, Request({"beta-flow", "ops-flow"})).value();
  EXPECT_TRUE(CheckRequestedWorkloads(scope, workloads).ok());
}

TEST(TenantViewTest, AnElephantFlowHasAPathPerNextHopHopByHop) {
  const v1::Plan plan = MakePlan();
  const auto view = BuildTenantView(ScopeFor(kAcme, Request({})).value(), &plan, Links(), Workloads());
  ASSERT_THAT(Ids(view), ElementsAre("acme-flow"));
  const v1::RelayWorkload& flow = view.at("acme-flow");
  EXPECT_EQ(flow.kind(), "elephant");
  EXPECT_EQ(flow.tenant(), "acme");
  EXPECT_EQ(flow.plan_generation(), 1u);
  EXPECT_TRUE(flow.routed());
  ASSERT_EQ(flow.paths_size(), 2);
  const v1::RelayPath& via_b = flow.paths(0);
  EXPECT_THAT(via_b.facility_ids(), ElementsAre("a", "b", "d"));
  EXPECT_THAT(LinkIds(via_b), ElementsAre("l-ab", "l-bd"));
  EXPECT_EQ(via_b.weight(), 3u);
  EXPECT_EQ(via_b.hops(0).latency_us(), 1500u);  // measured: RTT 3000 / 2
  EXPECT_TRUE(via_b.hops(0).latency_measured());
  EXPECT_DOUBLE_EQ(via_b.hops(0).loss_ratio(), 0.01);
  EXPECT_EQ(via_b.hops(0).state(), v1::OPER_STATE_UP);
  EXPECT_EQ(via_b.hops(1).latency_us(), 2000u);  // not measured: the inventory's
  EXPECT_FALSE(via_b.hops(1).latency_measured());
  EXPECT_EQ(via_b.total_latency_us(), 3500u);
  EXPECT_NEAR(via_b.loss_ratio(), 0.01, 1e-12);
  const v1::RelayPath& via_c = flow.paths(1);
  EXPECT_THAT(via_c.facility_ids(), ElementsAre("a", "c", "d"));
  EXPECT_THAT(LinkIds(via_c), ElementsAre("l-ac", "l-cd"));
  EXPECT_EQ(via_c.total_latency_us(), 2500u);
  EXPECT_EQ(flow.planned_latency_us(), 3000u);
  EXPECT_EQ(flow.measured_latency_us(), 3500u);  // the slowest path
}

TEST(TenantViewTest, AChainHasACallPerHopThereAndBack) {
  const v1::Plan plan = MakePlan();
  const auto view = BuildTenantView(ScopeFor(Caller(tls::Identity::Kind::kTenant, "beta"), Request({})).value(),
                                    &plan, Links(), Workloads());
  ASSERT_THAT(Ids(view), ElementsAre("beta-chain", "beta-flow"));
  const v1::RelayWorkload& chain = view.at("beta-chain");
  EXPECT_EQ(chain.kind(), "chain");
  ASSERT_EQ(chain.calls_size(), 1);
  const v1::RelayCall& call = chain.calls(0);
  EXPECT_EQ(call.service_id(), "svc");
  EXPECT_EQ(call.replica_facility_id(), "b");
  EXPECT_THAT(LinkIds(call.there()), ElementsAre("l-ab"));
  EXPECT_THAT(LinkIds(call.back()), ElementsAre("l-ba"));
  EXPECT_EQ(chain.planned_latency_us(), 5000u);
  EXPECT_EQ(chain.measured_latency_us(), 1500u + 1300u + 3000u);
  EXPECT_EQ(chain.latency_budget_us(), 10'000u);
  EXPECT_FALSE(chain.over_budget());
  ASSERT_EQ(chain.single_facility_dependencies_size(), 1);
  EXPECT_EQ(chain.single_facility_dependencies(0).facility_id(), "b");

  // Slower links put the chain over its budget, measured.
  std::vector<v1::Link> slow = Links();
  slow[4].mutable_health()->set_rtt_us(20'000);  // l-ba
  const auto over = BuildTenantView(ScopeFor(Caller(tls::Identity::Kind::kTenant, "beta"), Request({})).value(),
                                    &plan, slow, Workloads());
  EXPECT_TRUE(over.at("beta-chain").over_budget());
  EXPECT_EQ(over.at("beta-chain").planned_latency_us(), 5000u);
}

// The confidentiality rule: acme's view names none of beta's workloads, none
// of the links only beta uses, and says nothing of the plan's reason.
TEST(TenantViewTest, ATenantSeesNothingOfAnotherTenant) {
  const v1::Plan plan = MakePlan(/*ab_down=*/true);
  const auto view = BuildTenantView(ScopeFor(kAcme, Request({})).value(), &plan, Links(), Workloads());
  ASSERT_THAT(Ids(view), ElementsAre("acme-flow"));
  std::string everything;
  for (const auto& [id, workload] : view) everything += workload.DebugString();
  for (const char* foreign : {"beta", "l-ba", "l-ce", "ops-flow", "alice", "svc", "10.5.0.0"}) {
    EXPECT_THAT(everything, Not(HasSubstr(foreign))) << foreign;
  }
  EXPECT_THAT(LinksOf(view.at("acme-flow")), UnorderedElementsAre("l-ac", "l-cd"));
}

TEST(TenantViewTest, OperatorsSeeEveryoneOrOneTenant) {
  const v1::Plan plan = MakePlan();
  const auto all = BuildTenantView(ScopeFor(kViewer, Request({})).value(), &plan, Links(), Workloads());
  EXPECT_THAT(Ids(all), ElementsAre("acme-flow", "beta-chain", "beta-flow", "ops-flow"));
  const auto beta = BuildTenantView(ScopeFor(kViewer, Request({}, "beta")).value(), &plan, Links(), Workloads());
  EXPECT_THAT(Ids(beta), ElementsAre("beta-chain", "beta-flow"));
  const auto one = BuildTenantView(ScopeFor(kViewer, Request({"ops-flow"})).value(), &plan, Links(), Workloads());
  EXPECT_THAT(Ids(one), ElementsAre("ops-flow"));
  EXPECT_THAT(LinkIds(one.at("ops-flow").paths(0)), ElementsAre("l-bd"));
}

TEST(TenantViewTest, WithoutAPlanOrARouteAWorkloadIsUnroutedAndSaysWhy) {
  const auto none = BuildTenantView(ScopeFor(kAcme, Request({})).value(), nullptr, Links(), Workloads());
  EXPECT_FALSE(none.at("acme-flow").routed());
  EXPECT_THAT(none.at("acme-flow").unrouted_reason(), HasSubstr("no plan"));
  v1::Plan plan = MakePlan();
  plan.mutable_sites(0)->clear_routes();  // site a: no route for acme
  const auto unrouted = BuildTenantView(ScopeFor(kAcme, Request({})).value(), &plan, Links(), Workloads());
  EXPECT_FALSE(unrouted.at("acme-flow").routed());
  EXPECT_THAT(unrouted.at("acme-flow").paths(), IsEmpty());
  EXPECT_THAT(LinksOf(unrouted.at("acme-flow")), IsEmpty());
}

TEST(TenantViewTest, SameRouteIgnoresMeasurementsOnly) {
  const v1::Plan plan = MakePlan();
  const RelayScope scope = ScopeFor(kAcme, Request({})).value();
  const auto before = BuildTenantView(scope, &plan, Links(), Workloads());
  std::vector<v1::Link> slower = Links();
  slower[0].mutable_health()->set_rtt_us(9000);
  const auto measured = BuildTenantView(scope, &plan, slower, Workloads());
  EXPECT_TRUE(SameRoute(before.at("acme-flow"), measured.at("acme-flow")));
  const v1::Plan rerouted = MakePlan(/*ab_down=*/true);
  const auto after = BuildTenantView(scope, &rerouted, Links(), Workloads());
  EXPECT_FALSE(SameRoute(before.at("acme-flow"), after.at("acme-flow")));
}

}  // namespace
}  // namespace geodesic::pathcomp
