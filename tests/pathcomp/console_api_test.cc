// The console's JSON API (pathcomp/console/console_api.h) over a real model
// of the example backbone in the in-memory store and a planner that solves on
// demand: what each endpoint answers, how it refuses a bad query, and the
// event numbering that polling clients rely on.
#include "pathcomp/console/console_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "metrics/metrics_registry.h"
#include "pathcomp/console/event_history.h"
#include "pathcomp/service/pathcomp_metrics.h"
#include "state/memory_store.h"
#include "tests/support/test_dirs.h"
#include "topology/import.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::HasSubstr;
using google::protobuf::Struct;
using google::protobuf::Value;

// The answer's body as JSON (fails the test when it is not).
Struct Parse(const daemon::HttpResponse& response) {
  Struct object;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(response.body, &object).ok()) << response.body;
  return object;
}

const Value& Field(const Struct& object, const std::string& name) {
  static const Value kMissing;
  auto found = object.fields().find(name);
  return found == object.fields().end() ? kMissing : found->second;
}

daemon::HttpRequest Get(std::string path, std::map<std::string, std::string> query = {}) {
  return {.path = std::move(path), .query = std::move(query)};
}

class ConsoleApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::Open(state::NewMemoryStore());
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    auto inventory = topology::ImportTopology(testing::Backbone());
    ASSERT_TRUE(inventory.ok()) << inventory.status();
    inventory_ = *inventory;
    ASSERT_TRUE(model_->ImportInventory(inventory_, "test").ok());
    PlannerConfig config;
    config.replica_id = "pc1";
    planner_ = std::make_unique<Planner>(*model_, events_, config, solves_);
    api_ = std::make_unique<ConsoleApi>(*model_, *planner_, events_);
  }

  // Every agent reports its links up, as after a start (the plan then has routes).
  void ReportEveryLinkUp() {
    for (const v1::Facility& facility : model_->Facilities()) {
      ASSERT_TRUE(model_->OpenSession(facility.id(), "agent", 1).ok());
      v1::AgentMessage snapshot;
      snapshot.mutable_snapshot()->set_seq(1);
      for (const v1::Link& link : model_->Links()) {
        if (link.src_facility_id() != facility.id()) continue;
        v1::LinkReport* report = snapshot.mutable_snapshot()->add_links();
        report->set_link_id(link.id());
        report->mutable_health()->set_state(v1::OPER_STATE_UP);
        report->mutable_health()->set_rtt_us(2 * link.latency_us());
      }
      v1::AgentMessage sync;
      sync.mutable_sync()->set_seq(2);
      for (const v1::AgentMessage* message : {&snapshot, &sync}) {
        ASSERT_TRUE(model_->ApplyReport(facility.id(), "agent", 1, *message, "agent of " + facility.id()).ok());
      }
    }
    ASSERT_TRUE(planner_->SolveNow(SolveCause::kTelemetry, "links up").ok());
  }

  topology::Topology inventory_;
  std::unique_ptr<Model> model_;
  EventBus events_;
  metrics::Registry registry_{"pathcomp", {}};  // the test's solves are counted nowhere
  SolveMetrics solves_{registry_};
  std::unique_ptr<Planner> planner_;
  std::unique_ptr<ConsoleApi> api_;
};

TEST_F(ConsoleApiTest, TopologyHasEveryFacilityWithItsPositionAndEveryLink) {
  const daemon::HttpResponse response = api_->Topology(Get("/api/v1/topology"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.content_type, "application/json");
  const Struct topology = Parse(response);
  const auto& facilities = Field(topology, "facilities").list_value().values();
  ASSERT_EQ(facilities.size(), static_cast<int>(inventory_.facilities.size()));
  for (const Value& facility : facilities) {
    const Struct& position = Field(facility.struct_value(), "position").struct_value();
    EXPECT_NE(Field(position, "latitude_deg").number_value(), 0) << Field(facility.struct_value(), "id").string_value();
  }
  EXPECT_EQ(Field(topology, "links").list_value().values_size(), static_cast<int>(inventory_.links.size()));
  // 64-bit integers are strings, as protobuf's JSON mapping prints them.
  EXPECT_TRUE(Field(topology, "model_revision").has_string_value());
}

TEST_F(ConsoleApiTest, BeforeTheFirstPlanThePlanIsNullAndRoutesAre503) {
  const Struct plan = Parse(api_->Plan(Get("/api/v1/plan")));
  EXPECT_TRUE(Field(plan, "plan").has_null_value());
  const daemon::HttpResponse route = api_->Route(Get("/api/v1/route", {{"src", "iad"}, {"dst", "dfw"}}));
  EXPECT_EQ(route.status, 503);
  EXPECT_THAT(route.body, HasSubstr("no plan computed yet"));
  EXPECT_EQ(api_->Chains(Get("/api/v1/chains")).status, 503);
  EXPECT_EQ(api_->Audit(Get("/api/v1/audit")).status, 503);
}

TEST_F(ConsoleApiTest, PlanSummaryHasTheMluButNotTheRoutes) {
  ReportEveryLinkUp();
  const Struct answer = Parse(api_->Plan(Get("/api/v1/plan")));
  const Struct& plan = Field(answer, "plan").struct_value();
  EXPECT_EQ(Field(plan, "generation").string_value(), std::to_string(planner_->CurrentPlan()->generation()));
  const Struct& elephants = Field(plan, "elephants").struct_value();
  EXPECT_DOUBLE_EQ(Field(elephants, "max_utilization").number_value(),
                   planner_->CurrentPlan()->elephants().max_utilization());
  EXPECT_GT(Field(elephants, "demand_gbps").number_value(), 0);
  for (const char* omitted : {"sites", "chains", "single_facility_dependencies"}) {
    EXPECT_FALSE(plan.fields().contains(omitted)) << omitted;
  }
}

TEST_F(ConsoleApiTest, RouteSharesFollowEverySiteForwardingAndAddUpAtBothEnds) {
  ReportEveryLinkUp();
  const Struct answer = Parse(api_->Route(Get("/api/v1/route", {{"src", "iad"}, {"dst", "dfw"}})));
  const auto& routes = Field(answer, "routes").list_value().values();
  ASSERT_EQ(routes.size(), 2);  // dfw's IPv4 and IPv6 prefixes
  std::map<std::string, const v1::Link*> links;
  for (const v1::Link& link : inventory_.links) links[link.id()] = &link;
  for (const Value& entry : routes) {
    const Struct& route = Field(entry.struct_value(), "route").struct_value();
    const auto& path = Field(route, "path_facility_ids").list_value().values();
    ASSERT_GE(path.size(), 2);
    EXPECT_EQ(path[0].string_value(), "iad");
    EXPECT_EQ(path[path.size() - 1].string_value(), "dfw");
    EXPECT_EQ(Field(route, "destination_facility_id").string_value(), "dfw");
    EXPECT_GE(Field(entry.struct_value(), "backups").number_value(), 1) << "iad's first links are protected";
    // All of what iad sends leaves iad, and all of it arrives at dfw.
    double out_of_iad = 0, into_dfw = 0;
    for (const Value& share : Field(entry.struct_value(), "links").list_value().values()) {
      const v1::Link* link = links[Field(share.struct_value(), "link_id").string_value()];
      ASSERT_NE(link, nullptr);
      const double value = Field(share.struct_value(), "share").number_value();
      EXPECT_GT(value, 0);
      EXPECT_LE(value, 1.0);
      if (link->src_facility_id() == "iad") out_of_iad += value;
      if (link->dst_facility_id() == "dfw") into_dfw += value;
    }
    EXPECT_NEAR(out_of_iad, 1.0, 1e-4);  // shares are printed to 6 digits
    EXPECT_NEAR(into_dfw, 1.0, 1e-4);
  }
}

TEST_F(ConsoleApiTest, RouteRefusesWhatItCannotAnswerNamingIt) {
  ReportEveryLinkUp();
  struct Case {
    std::map<std::string, std::string> query;
    std::string error;
  };
  for (const Case& bad : std::vector<Case>{
           {{{"dst", "dfw"}}, "missing query parameter src"},
           {{{"src", "iad"}}, "missing query parameter dst"},
           {{{"src", "iad"}, {"dst", "atlantis"}}, "unknown facility \\\"atlantis\\\" (dst)"},
           {{{"src", "IAD"}, {"dst", "dfw"}}, "unknown facility \\\"IAD\\\" (src)"},
           {{{"src", "iad"}, {"dst", "iad"}}, "same facility (iad)"}}) {
    const daemon::HttpResponse response = api_->Route(Get("/api/v1/route", bad.query));
    EXPECT_EQ(response.status, 400) << bad.error;
    EXPECT_EQ(response.content_type, "application/json");
    EXPECT_THAT(response.body, HasSubstr(bad.error));
  }
}

TEST_F(ConsoleApiTest, ChainsNameTheirSlowestHop) {
  ReportEveryLinkUp();
  const Struct answer = Parse(api_->Chains(Get("/api/v1/chains")));
  const auto& chains = Field(answer, "chains").list_value().values();
  ASSERT_EQ(chains.size(), 1);  // rag-nyc
  const Struct& entry = chains[0].struct_value();
  const v1::ChainAssignment& primary = planner_->CurrentPlan()->chains(0).primary();
  ASSERT_TRUE(primary.placed());
  int slowest = 0;
  for (int i = 1; i < primary.hops_size(); ++i) {
    const auto cost = [&](int hop) { return primary.hops(hop).network_rtt_us() + primary.hops(hop).service_time_us(); };
    if (cost(i) > cost(slowest)) slowest = i;
  }
  EXPECT_EQ(Field(entry, "slowest_hop").number_value(), slowest);
  EXPECT_EQ(Field(Field(entry, "chain").struct_value(), "workload_id").string_value(), "rag-nyc");
}

TEST_F(ConsoleApiTest, EventsAreNumberedForPolling) {
  for (uint64_t generation : {5, 6, 7}) {
    v1::Event event;
    event.mutable_plan()->set_generation(generation);
    events_.Publish(event);
  }
  const Struct all = Parse(api_->Events(Get("/api/v1/events")));
  EXPECT_EQ(Field(all, "latest_seq").string_value(), "3");
  ASSERT_EQ(Field(all, "events").list_value().values_size(), 3);
  const Struct& first = Field(all, "events").list_value().values(0).struct_value();
  EXPECT_EQ(Field(first, "seq").string_value(), "1");
  EXPECT_EQ(Field(Field(Field(first, "event").struct_value(), "plan").struct_value(), "generation").string_value(), "5");

  const Struct newer = Parse(api_->Events(Get("/api/v1/events", {{"after", "2"}})));
  ASSERT_EQ(Field(newer, "events").list_value().values_size(), 1);
  EXPECT_EQ(Field(Field(newer, "events").list_value().values(0).struct_value(), "seq").string_value(), "3");
  EXPECT_EQ(Field(Parse(api_->Events(Get("/api/v1/events", {{"after", "3"}}))), "events").list_value().values_size(), 0);
  // A client of an earlier run of pathcomp starts over.
  EXPECT_EQ(Field(Parse(api_->Events(Get("/api/v1/events", {{"after", "90"}}))), "events").list_value().values_size(), 3);
  const daemon::HttpResponse bad = api_->Events(Get("/api/v1/events", {{"after", "-1"}}));
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("after"));
}

TEST(EventHistoryTest, KeepsTheNewestAndCountsWhatAPollerMissed) {
  EventBus bus;
  EventHistory history(bus, /*capacity=*/2);
  for (int i = 0; i < 3; ++i) bus.Publish(v1::Event());
  const EventHistory::Page page = history.After(0);
  EXPECT_EQ(page.latest_seq, 3u);
  EXPECT_EQ(page.missed, 1u);
  ASSERT_EQ(page.events.size(), 2u);
  EXPECT_EQ(page.events[0].seq, 2u);
  EXPECT_EQ(history.After(2).missed, 0u);
}

TEST(EventHistoryTest, NumbersSkipWhatTheBusDropped) {
  EventBus bus(/*queue_limit=*/2);
  EventHistory history(bus);
  for (int i = 0; i < 5; ++i) bus.Publish(v1::Event());  // the bus keeps the last 2
  const EventHistory::Page page = history.After(0);
  EXPECT_EQ(page.latest_seq, 5u);
  ASSERT_EQ(page.events.size(), 2u);
  EXPECT_EQ(page.events[0].seq, 4u);
  EXPECT_EQ(page.missed, 3u);
}

}  // namespace
}  // namespace geodesic::pathcomp
