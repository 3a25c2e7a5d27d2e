// What-if and the drain pre-check on the example backbone: failures applied
// to a view, and the impact of two plans made the way pathcomp makes them.
#include "pathcomp/solver/impact.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "pathcomp/solver/plan_builder.h"
#include "topology/import.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

v1::FailureScope Scope(v1::FailureKind kind, const std::string& id, uint32_t plane = 0) {
  v1::FailureScope scope;
  scope.set_kind(kind);
  scope.set_id(id);
  scope.set_plane(plane);
  return scope;
}

class ImpactTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* source = std::getenv("GEODESIC_SOURCE_DIR");
    auto topology = topology::ImportTopology(std::string(source ? source : ".") + "/deploy/examples/backbone.yaml");
    ASSERT_TRUE(topology.ok()) << topology.status();
    view_.facilities = topology->facilities;
    view_.nodes = topology->nodes;
    view_.links = topology->links;
    for (auto& link : view_.links) link.mutable_health()->set_state(v1::OPER_STATE_UP);
    view_.fabrics = topology->fabrics;
    view_.services = topology->services;
    view_.workloads = topology->workloads;
  }

  v1::Plan PlanOf(const ModelView& view) {
    ElephantAllocator allocator(0.1);
    return BuildPlan(Snapshot::Build(view), PlanStamp{}, allocator, nullptr).plan;
  }

  v1::OperState State(const ModelView& view, const std::string& link) {
    for (const auto& l : view.links) {
      if (l.id() == link) return l.health().state();
    }
    return v1::OPER_STATE_UNKNOWN;
  }

  ModelView view_;
};

TEST_F(ImpactTest, FailuresTakeOutWhatTheyName) {
  ModelView view = view_;
  ASSERT_TRUE(ApplyFailures({Scope(v1::FAILURE_KIND_LINK, "iad-nyc")}, view).ok());
  EXPECT_EQ(State(view, "iad-nyc"), v1::OPER_STATE_DOWN);
  EXPECT_EQ(State(view, "nyc-iad"), v1::OPER_STATE_DOWN);  // one fiber
  EXPECT_EQ(State(view, "iad-chi"), v1::OPER_STATE_UP);

  view = view_;
  ASSERT_TRUE(ApplyFailures({Scope(v1::FAILURE_KIND_SRLG, "conduit-iad-north")}, view).ok());
  EXPECT_EQ(State(view, "iad-nyc"), v1::OPER_STATE_DOWN);
  EXPECT_EQ(State(view, "iad-chi"), v1::OPER_STATE_DOWN);

  view = view_;
  ASSERT_TRUE(ApplyFailures({Scope(v1::FAILURE_KIND_FACILITY, "chi")}, view).ok());
  EXPECT_EQ(State(view, "nyc-chi"), v1::OPER_STATE_DOWN);
  EXPECT_EQ(State(view, "chi-den"), v1::OPER_STATE_DOWN);
  for (const auto& service : view.services) {
    EXPECT_THAT(std::vector<std::string>(service.replica_facility_ids().begin(), service.replica_facility_ids().end()),
                Not(Contains("chi")));
  }

  view = view_;
  ASSERT_TRUE(ApplyFailures({Scope(v1::FAILURE_KIND_PLANE, "sjc", 3)}, view).ok());
  ASSERT_EQ(view.intents.size(), 1u);
  EXPECT_TRUE(view.intents[0].drain().plane_set());
  EXPECT_EQ(Snapshot::Build(view).facility_exchange_gbps(Snapshot::Build(view).FacilityIndex("sjc")),
            Snapshot::Build(view_).facility_exchange_gbps(Snapshot::Build(view_).FacilityIndex("sjc")));
}

TEST_F(ImpactTest, BadScopesChangeNothing) {
  ModelView view = view_;
  const std::string before = view.links[0].SerializeAsString();
  auto status = ApplyFailures({Scope(v1::FAILURE_KIND_LINK, "iad-nyc"), Scope(v1::FAILURE_KIND_LINK, "nowhere")}, view);
  EXPECT_TRUE(absl::IsNotFound(status)) << status;
  EXPECT_EQ(view.links[0].SerializeAsString(), before);
  EXPECT_EQ(State(view, "iad-nyc"), v1::OPER_STATE_UP);
  EXPECT_TRUE(absl::IsInvalidArgument(ApplyFailures({}, view)));
  EXPECT_TRUE(absl::IsInvalidArgument(ApplyFailures({Scope(v1::FAILURE_KIND_PLANE, "sjc", 4)}, view)));
  EXPECT_TRUE(absl::IsNotFound(ApplyFailures({Scope(v1::FAILURE_KIND_PLANE, "chi", 0)}, view)));  // no fabric
  EXPECT_TRUE(absl::IsInvalidArgument(ApplyFailures({Scope(v1::FAILURE_KIND_UNSPECIFIED, "iad")}, view)));
  std::vector<v1::FailureScope> many(kMaxWhatIfFailures + 1, Scope(v1::FAILURE_KIND_LINK, "iad-nyc"));
  EXPECT_TRUE(absl::IsInvalidArgument(ApplyFailures(many, view)));
  EXPECT_TRUE(UtilizationLimit(0).ok());
  EXPECT_EQ(*UtilizationLimit(0), 1.0);
  EXPECT_FALSE(UtilizationLimit(-1).ok());
  EXPECT_FALSE(UtilizationLimit(11).ok());
}

TEST_F(ImpactTest, LosingDallasCutsTheCheckpointFlowAndIsRefusedAsADrain) {
  const v1::Plan before = PlanOf(view_);
  ModelView failed = view_;
  ASSERT_TRUE(ApplyFailures({Scope(v1::FAILURE_KIND_FACILITY, "dfw")}, failed).ok());
  const v1::Impact impact = CompareImpact(before, PlanOf(failed), Snapshot::Build(view_), 1.0);
  EXPECT_THAT(std::vector<std::string>(impact.cut_workload_ids().begin(), impact.cut_workload_ids().end()),
              Contains("ckpt-iad-dfw"));
  EXPECT_GT(impact.routes_changed(), 0u);
  EXPECT_LT(impact.carried_after_gbps(), impact.carried_before_gbps());
  const std::vector<std::string> refusals = DrainRefusals(impact);
  EXPECT_THAT(refusals, Contains("workload ckpt-iad-dfw would lose its last path"));

  // The same plan twice: nothing moves, nothing is refused.
  const v1::Impact none = CompareImpact(before, PlanOf(view_), Snapshot::Build(view_), 1.0);
  EXPECT_EQ(none.moved_workload_ids_size(), 0);
  EXPECT_EQ(none.cut_workload_ids_size(), 0);
  EXPECT_EQ(none.routes_changed(), 0u);
  EXPECT_TRUE(DrainRefusals(none).empty());
}

TEST_F(ImpactTest, ALowLimitNamesTheLinksOverIt) {
  const v1::Plan before = PlanOf(view_);
  ModelView drained = view_;
  v1::Intent& drain = drained.intents.emplace_back();
  drain.set_id("drain-link-iad-dfw");
  drain.mutable_drain()->mutable_target()->set_link_id("iad-dfw");
  const v1::Impact impact = CompareImpact(before, PlanOf(drained), Snapshot::Build(view_), 0.05);
  ASSERT_GT(impact.links_over_limit_size(), 0);
  EXPECT_GT(impact.links_over_limit(0).after(), 0.05);
  EXPECT_THAT(DrainRefusals(impact), Contains(HasSubstr("(limit 5%")));
  EXPECT_THAT(std::vector<std::string>(impact.moved_workload_ids().begin(), impact.moved_workload_ids().end()),
              Contains("ckpt-iad-dfw"));
}

}  // namespace
}  // namespace geodesic::pathcomp
