// The model's rules for workloads and intents, on hand-made entities: no store.
#include "pathcomp/model/entity_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace geodesic::pathcomp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Two facilities, iad with a 4-plane fabric, one link, one service in ord, an
// elephant flow and a chain.
Entities TwoSites() {
  Entities entities;
  for (const char* id : {"iad", "ord"}) entities.facilities[id].set_id(id);
  entities.nodes["iad-r1"].set_id("iad-r1");
  entities.links["iad-ord"].set_id("iad-ord");
  entities.fabrics["iad"].set_facility_id("iad");
  entities.fabrics["iad"].set_planes(4);
  auto& service = entities.services["retriever"];
  service.set_id("retriever");
  service.add_replica_facility_ids("ord");
  auto& flow = entities.workloads["ckpt"];
  flow.set_id("ckpt");
  flow.mutable_elephant()->set_src_facility_id("iad");
  flow.mutable_elephant()->set_dst_prefix("10.2.0.0/16");
  flow.mutable_elephant()->set_demand_gbps(100);
  auto& chain = entities.workloads["agent"];
  chain.set_id("agent");
  chain.mutable_chain()->set_origin_facility_id("iad");
  chain.mutable_chain()->add_service_ids("retriever");
  chain.mutable_chain()->set_latency_budget_us(50'000);
  return entities;
}

v1::Intent Drain(const std::string& id, const std::string& link) {
  v1::Intent intent;
  intent.set_id(id);
  intent.mutable_drain()->mutable_target()->set_link_id(link);
  return intent;
}

v1::Intent PlaneDrain(const std::string& facility, uint32_t plane) {
  v1::Intent intent;
  intent.set_id("drain-plane");
  intent.mutable_drain()->mutable_target()->set_facility_id(facility);
  intent.mutable_drain()->set_plane(plane);
  intent.mutable_drain()->set_plane_set(true);
  return intent;
}

v1::Intent PathPin(const std::string& id, const std::string& workload, std::vector<std::string> path) {
  v1::Intent intent;
  intent.set_id(id);
  intent.mutable_pin()->set_workload_id(workload);
  for (auto& facility : path) intent.mutable_pin()->add_path_facility_ids(facility);
  return intent;
}

TEST(EntityRulesTest, AWorkloadRefersToWhatExists) {
  const Entities entities = TwoSites();
  EXPECT_TRUE(CheckWorkload(entities, entities.workloads.at("ckpt")).ok());
  EXPECT_TRUE(CheckWorkload(entities, entities.workloads.at("agent")).ok());

  v1::Workload from_nowhere = entities.workloads.at("ckpt");
  from_nowhere.mutable_elephant()->set_src_facility_id("sfo");
  EXPECT_EQ(CheckWorkload(entities, from_nowhere).code(), absl::StatusCode::kNotFound);
  v1::Workload unknown_service = entities.workloads.at("agent");
  unknown_service.mutable_chain()->add_service_ids("ranker");
  EXPECT_THAT(CheckWorkload(entities, unknown_service).message(), HasSubstr("unknown service ranker"));
}

TEST(EntityRulesTest, AWorkloadsTenantIsAnIdOrEmpty) {
  const Entities entities = TwoSites();
  v1::Workload workload = entities.workloads.at("agent");
  workload.set_tenant("acme-1");
  EXPECT_TRUE(CheckWorkload(entities, workload).ok());
  for (const char* bad : {"Acme", "-acme", "a/b", "acme tenant"}) {
    workload.set_tenant(bad);
    const absl::Status status = CheckWorkload(entities, workload);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(status.message(), HasSubstr("tenant")) << bad;
  }
  workload.set_tenant(std::string(64, 'a'));
  EXPECT_EQ(CheckWorkload(entities, workload).code(), absl::StatusCode::kInvalidArgument);
}

TEST(EntityRulesTest, AWorkloadIsWellFormed) {
  const Entities entities = TwoSites();
  v1::Workload workload = entities.workloads.at("ckpt");
  workload.mutable_elephant()->set_dst_prefix("10.2.0.0/33");
  EXPECT_THAT(CheckWorkload(entities, workload).message(), HasSubstr("not a CIDR prefix"));
  workload = entities.workloads.at("ckpt");
  workload.mutable_elephant()->set_demand_gbps(0);
  EXPECT_EQ(CheckWorkload(entities, workload).code(), absl::StatusCode::kInvalidArgument);
  workload.set_id("bad id");
  EXPECT_THAT(CheckWorkload(entities, workload).message(), HasSubstr("is not valid"));
  workload = entities.workloads.at("agent");
  workload.mutable_chain()->set_latency_budget_us(0);
  EXPECT_EQ(CheckWorkload(entities, workload).code(), absl::StatusCode::kInvalidArgument);
  v1::Workload neither;
  neither.set_id("empty");
  EXPECT_EQ(CheckWorkload(entities, neither).code(), absl::StatusCode::kInvalidArgument);
}

TEST(EntityRulesTest, ANewIntentActsOnWhatExistsAndDoesNotRepeatAnother) {
  Entities entities = TwoSites();
  EXPECT_TRUE(CheckNewIntent(entities, Drain("drain-1", "iad-ord")).ok());
  EXPECT_EQ(CheckNewIntent(entities, Drain("drain-1", "iad-sfo")).code(), absl::StatusCode::kNotFound);

  entities.intents["drain-1"] = Drain("drain-1", "iad-ord");
  EXPECT_THAT(CheckNewIntent(entities, Drain("drain-1", "iad-ord")).message(), HasSubstr("already exists"));
  EXPECT_THAT(CheckNewIntent(entities, Drain("drain-2", "iad-ord")).message(),
              HasSubstr("already drained by intent drain-1"));

  v1::Intent long_reason = Drain("drain-3", "iad-ord");
  entities.intents.clear();
  long_reason.set_reason(std::string(1025, 'x'));
  EXPECT_THAT(CheckNewIntent(entities, long_reason).message(), HasSubstr("reason longer than 1024"));
}

TEST(EntityRulesTest, APlaneDrainNamesAPlaneOfTheFacilitysFabric) {
  const Entities entities = TwoSites();
  EXPECT_TRUE(CheckIntentTarget(entities, PlaneDrain("iad", 3)).ok());
  EXPECT_THAT(CheckIntentTarget(entities, PlaneDrain("iad", 4)).message(), HasSubstr("there is no plane 4"));
  EXPECT_THAT(CheckIntentTarget(entities, PlaneDrain("ord", 0)).message(), HasSubstr("has no fabric"));
}

TEST(EntityRulesTest, OnlyAChainIsPinnedAndOnlyWhereItsServicesRun) {
  Entities entities = TwoSites();
  EXPECT_TRUE(CheckNewIntent(entities, PathPin("pin-1", "agent", {"ord"})).ok());
  EXPECT_THAT(CheckNewIntent(entities, PathPin("pin-1", "agent", {"iad"})).message(),
              HasSubstr("has no replica in iad"));
  EXPECT_EQ(CheckNewIntent(entities, PathPin("pin-1", "ckpt", {"ord"})).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(CheckNewIntent(entities, PathPin("pin-1", "agent", {"ord", "ord"})).message(),
              HasSubstr("makes 1 calls"));

  entities.intents["pin-1"] = PathPin("pin-1", "agent", {"ord"});
  EXPECT_THAT(CheckNewIntent(entities, PathPin("pin-2", "agent", {"ord"})).message(),
              HasSubstr("already pinned by intent pin-1"));
  EXPECT_EQ(PinningIntent(entities, "agent"), "pin-1");
  EXPECT_EQ(PinningIntent(entities, "ckpt"), std::nullopt);
}

TEST(EntityRulesTest, MetricOverridesExpireAtTheirTime) {
  Entities entities = TwoSites();
  v1::Intent override;
  override.set_id("metric-1");
  override.mutable_metric_override()->set_link_id("iad-ord");
  override.mutable_metric_override()->set_igp_metric(70000);
  EXPECT_THAT(CheckNewIntent(entities, override).message(), HasSubstr("1..65535"));
  override.mutable_metric_override()->set_igp_metric(50);
  override.mutable_metric_override()->set_expires_at_unix_ms(1'000);
  EXPECT_TRUE(CheckNewIntent(entities, override).ok());
  entities.intents["metric-1"] = override;
  entities.intents["drain-1"] = Drain("drain-1", "iad-ord");
  EXPECT_THAT(ExpiredIntents(entities, 999), IsEmpty());
  EXPECT_THAT(ExpiredIntents(entities, 1'000), ElementsAre("metric-1"));
}

TEST(EntityRulesTest, AnImportMayNotLeaveAWorkloadOrIntentDangling) {
  Entities next = TwoSites();
  next.intents["drain-1"] = Drain("drain-1", "iad-ord");
  EXPECT_TRUE(CheckReferencesAfterImport(next, false).ok());

  Entities without_link = next;
  without_link.links.clear();
  absl::Status refused = CheckReferencesAfterImport(without_link, false);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("intent drain-1 would be invalid: unknown link iad-ord"));

  Entities without_service = next;
  without_service.services.clear();
  refused = CheckReferencesAfterImport(without_service, false);
  EXPECT_THAT(refused.message(), HasSubstr("workload agent would be invalid: unknown service retriever"));
  EXPECT_THAT(refused.message(), HasSubstr("remove it first, or replace the workloads"));
  EXPECT_THAT(CheckReferencesAfterImport(without_service, true).message(), Not(HasSubstr("remove it first")));
}

}  // namespace
}  // namespace geodesic::pathcomp
