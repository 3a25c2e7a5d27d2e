// The three real daemons as processes on ephemeral loopback ports, over mTLS,
// with pathcomp's model in RocksDB: agents' reports become a plan that every
// routerd receives; refused peers and refused input change nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "geodesic/v1/plan.grpc.pb.h"
#include "geodesic/v1/telemetry.grpc.pb.h"
#include "site_plan/site_plan_reader.h"
#include "tests/support/lab_testing.h"

namespace geodesic {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using sim::LocalLab;
using std::chrono::seconds;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class EndToEndTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    work_ = new testing::TempDir("e2e");
    // Link health from the agents' static source: no probe flaps.
    auto lab = LocalLab::Create(testing::LabOptionsFor(work_->path()));
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = lab->release();
    client_ = new sim::LabClient(*lab_);
    ASSERT_TRUE(lab_->StartAll().ok());
  }

  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
    delete lab_;
    lab_ = nullptr;
    if (failed_) work_->keep();
    delete work_;
    work_ = nullptr;
  }

  void SetUp() override { ASSERT_NE(lab_, nullptr); }
  void TearDown() override { failed_ = failed_ || HasFailure(); }

  static std::optional<v1::GetPlanResponse> GetPlan() {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::GetPlanResponse response;
    if (!stub->GetPlan(&context, {}, &response).ok()) return std::nullopt;
    return response;
  }

  static std::vector<v1::Link> Links() {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::ListLinksResponse response;
    EXPECT_TRUE(stub->ListLinks(&context, {}, &response).ok());
    return {response.links().begin(), response.links().end()};
  }

  // Waits until every link is reported up and pathcomp says the plan made
  // from that is at every site's routers, with every facility pair reachable.
  static absl::Status AwaitConverged(seconds timeout) {
    if (auto up = client_->WaitLinksIn(v1::OPER_STATE_UP, timeout); !up.ok()) return up;
    auto seen = client_->Plan();
    if (!seen.ok()) return seen.status();
    auto converged = client_->WaitConverged({.timeout = timeout, .min_model_revision = seen->model_revision()});
    if (!converged.ok()) return converged.status();
    if (!converged->plan().unreachable().empty()) return absl::FailedPreconditionError("some facility pair is unreachable");
    return absl::OkStatus();
  }

  // The state of every link whose id starts with `prefix` (all by default):
  // the probes keep refreshing the measurements, so what a refused report
  // would have changed is the state it claimed.
  static std::string LinkStates(const std::string& prefix = "") {
    std::string states;
    for (const auto& link : Links()) {
      if (link.id().rfind(prefix, 0) != 0) continue;
      states += link.id() + "=" + std::to_string(link.health().state()) + " ";
    }
    return states;
  }

  // The causes of the plans published after `generation`, one entry per
  // cause ("link chi-iad down (chi agent)", "intent drain-iad by ..."). The
  // lab's agents probe for real: a link may flap and re-plan at any time, so
  // what a refused request must not have caused is looked up by its cause.
  static std::vector<std::string> PlanCausesSince(uint64_t generation) {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::ListPlansResponse response;
    EXPECT_TRUE(stub->ListPlans(&context, {}, &response).ok());
    std::vector<std::string> causes;
    for (const auto& plan : response.plans()) {
      if (plan.generation() <= generation) continue;
      std::stringstream reason(plan.reason());
      for (std::string cause; std::getline(reason, cause, ';');) causes.push_back(cause);
    }
    return causes;
  }

  // The first next hop of iad's installed route to chi's 10.3.0.0/16.
  static std::string ViaAtIad() {
    const auto installed = lab_->InstalledPlan("iad");
    if (!installed) return "";
    for (const auto& route : installed->routes()) {
      const v1::NextHopGroup& group = site_plan::PrimaryGroup(*installed, route);
      if (route.prefix() == "10.3.0.0/16" && group.ports_size() > 0) return site_plan::LinkId(*installed, group, 0);
    }
    return "";
  }

  static std::shared_ptr<grpc::Channel> Channel(const tls::TlsFiles& files) {
    return grpc::CreateChannel(lab_->pathcomp_address(),
                               tls::MakeChannelCredentials(files, tls::Identity::Kind::kPathcomp));
  }

  static testing::TempDir* work_;
  static LocalLab* lab_;
  static sim::LabClient* client_;
  static bool failed_;
};

testing::TempDir* EndToEndTest::work_ = nullptr;
LocalLab* EndToEndTest::lab_ = nullptr;
sim::LabClient* EndToEndTest::client_ = nullptr;
bool EndToEndTest::failed_ = false;

TEST_F(EndToEndTest, RouterdReceivesThePlanComputedFromAgentReports) {
  ASSERT_EQ(AwaitConverged(seconds(60)), absl::OkStatus());
  auto plan = GetPlan();
  ASSERT_TRUE(plan);
  // iad reaches chi directly: the fiber the iad agent reported up.
  bool found = false;
  for (const auto& site : plan->plan().sites()) {
    if (site.facility_id() != "iad") continue;
    for (const auto& route : site.routes()) {
      if (route.prefix() != "10.3.0.0/16") continue;
      found = true;
      const v1::ForwardingRoute resolved = site_plan::Primary(site, route);
      ASSERT_EQ(resolved.next_hops_size(), 1);
      EXPECT_EQ(resolved.next_hops(0).link_id(), "iad-chi");
    }
  }
  EXPECT_TRUE(found);
  // iad's routerd has that plan (its state, not its log).
  EXPECT_EQ(ViaAtIad(), "iad-chi");

  // A cut reported by the agents moves the route, and routerd installs that.
  ASSERT_TRUE(lab_->SetLinkState("iad-chi", "down").ok());
  auto revision = client_->WaitLinkStates({"iad-chi"}, v1::OPER_STATE_DOWN, seconds(30));
  ASSERT_TRUE(revision.ok()) << revision.status();
  auto moved = client_->WaitConverged({.timeout = seconds(30), .min_model_revision = *revision});
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(ViaAtIad(), "iad-nyc");
  ASSERT_TRUE(lab_->SetLinkState("iad-chi", "up").ok());
  ASSERT_EQ(AwaitConverged(seconds(30)), absl::OkStatus());
}

TEST_F(EndToEndTest, ClientWithoutCertificateIsRefused) {
  ASSERT_EQ(AwaitConverged(seconds(60)), absl::OkStatus());
  grpc::SslCredentialsOptions server_auth_only;
  server_auth_only.pem_root_certs = ReadFile(lab_->pki_dir() + "/ca.crt");
  auto stub = v1::Operator::NewStub(
      grpc::CreateChannel(lab_->pathcomp_address(), grpc::SslCredentials(server_auth_only)));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(5));
  v1::ListLinksResponse response;
  const grpc::Status status = stub->ListLinks(&context, {}, &response);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(response.links_size(), 0);

  auto plain = v1::Operator::NewStub(
      grpc::CreateChannel(lab_->pathcomp_address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext plain_context;
  plain_context.set_deadline(std::chrono::system_clock::now() + seconds(5));
  EXPECT_FALSE(plain->ListLinks(&plain_context, {}, &response).ok());
}

TEST_F(EndToEndTest, CertificateFromAnotherCaIsRefused) {
  ASSERT_EQ(AwaitConverged(seconds(60)), absl::OkStatus());
  testing::TempDir other_dir("other-ca");
  const std::string other = other_dir.path();
  const absl::Status made = sim::RunMakePki(other, {"--facilities", "iad", "--operators", "admin:admin"});
  ASSERT_TRUE(made.ok()) << made;
  // What the rogue agent below would report on: iad's links. (The others are
  // probed for real by the lab's agents and may flap on a loaded machine.)
  const std::string before = LinkStates("iad-");
  // An operator of the other CA, trusting our CA for the server.
  tls::TlsFiles rogue{lab_->pki_dir() + "/ca.crt", other + "/operator-admin.crt",
                      other + "/operator-admin.key"};
  auto stub = v1::Operator::NewStub(Channel(rogue));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(5));
  v1::AddIntentRequest drain;
  drain.mutable_intent()->set_id("rogue");
  drain.mutable_intent()->mutable_drain()->mutable_target()->set_facility_id("iad");
  v1::AddIntentResponse response;
  EXPECT_FALSE(stub->AddIntent(&context, drain, &response).ok());
  // An agent of the other CA reporting iad's links down.
  tls::TlsFiles rogue_agent{lab_->pki_dir() + "/ca.crt", other + "/site-iad-agent.crt",
                            other + "/site-iad-agent.key"};
  auto telemetry = v1::Telemetry::NewStub(Channel(rogue_agent));
  grpc::ClientContext stream_context;
  stream_context.set_deadline(std::chrono::system_clock::now() + seconds(5));
  auto stream = telemetry->Report(&stream_context);
  v1::AgentMessage hello;
  hello.mutable_hello()->set_facility_id("iad");
  hello.mutable_hello()->set_agent_id("agent");
  hello.mutable_hello()->set_incarnation(1);
  stream->Write(hello);
  v1::ControllerMessage reply;
  EXPECT_FALSE(stream->Read(&reply));
  EXPECT_FALSE(stream->Finish().ok());
  EXPECT_EQ(LinkStates("iad-"), before);
}

TEST_F(EndToEndTest, AgentClaimingAnotherFacilitysLinksIsRefusedAndChangesNothing) {
  ASSERT_EQ(AwaitConverged(seconds(60)), absl::OkStatus());
  const std::string before = LinkStates("chi-iad") + LinkStates("iad-chi");
  const uint64_t generation = GetPlan()->plan().generation();
  auto telemetry = v1::Telemetry::NewStub(Channel(lab_->agent_tls("iad")));

  {  // The iad agent speaking for chi.
    grpc::ClientContext context;
    auto stream = telemetry->Report(&context);
    v1::AgentMessage hello;
    hello.mutable_hello()->set_facility_id("chi");
    hello.mutable_hello()->set_agent_id("agent");
    hello.mutable_hello()->set_incarnation(7);
    stream->Write(hello);
    stream->WritesDone();
    v1::ControllerMessage reply;
    EXPECT_FALSE(stream->Read(&reply));
    const grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(status.error_message(), HasSubstr("may not report for facility chi"));
  }
  {  // The iad agent, as itself, reporting chi's link down.
    grpc::ClientContext context;
    auto stream = telemetry->Report(&context);
    v1::AgentMessage hello;
    hello.mutable_hello()->set_facility_id("iad");
    hello.mutable_hello()->set_agent_id("intruder");
    hello.mutable_hello()->set_incarnation(7);
    ASSERT_TRUE(stream->Write(hello));
    v1::ControllerMessage reply;
    ASSERT_TRUE(stream->Read(&reply));
    ASSERT_TRUE(reply.has_hello_ack());
    EXPECT_TRUE(reply.hello_ack().snapshot_required());
    v1::AgentMessage snapshot;
    snapshot.mutable_snapshot()->set_seq(1);
    auto* report = snapshot.mutable_snapshot()->add_links();
    report->set_link_id("chi-iad");
    report->mutable_health()->set_state(v1::OPER_STATE_DOWN);
    stream->Write(snapshot);
    stream->WritesDone();
    while (stream->Read(&reply)) {
    }
    const grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(status.error_message(), HasSubstr("may not report link chi-iad"));
  }
  {  // An oversized report.
    grpc::ClientContext context;
    auto stream = telemetry->Report(&context);
    v1::AgentMessage hello;
    hello.mutable_hello()->set_facility_id("iad");
    hello.mutable_hello()->set_agent_id("bloated");
    hello.mutable_hello()->set_incarnation(8);
    ASSERT_TRUE(stream->Write(hello));
    v1::ControllerMessage reply;
    ASSERT_TRUE(stream->Read(&reply));
    v1::AgentMessage snapshot;
    snapshot.mutable_snapshot()->set_seq(1);
    for (int i = 0; i < 60'000; ++i) {  // ~1.3 MB
      auto* report = snapshot.mutable_snapshot()->add_links();
      report->set_link_id("iad-chi");
      report->mutable_health()->set_state(v1::OPER_STATE_DOWN);
      report->mutable_health()->set_rtt_us(1'000'000);
    }
    stream->Write(snapshot);
    stream->WritesDone();
    while (stream->Read(&reply)) {
    }
    const grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("exceeds the limit"));
  }
  EXPECT_EQ(LinkStates("chi-iad") + LinkStates("iad-chi"), before);
  // Nothing the iad agents (the real one, the intruder, the bloated one) said re-planned chi-iad.
  for (const std::string& cause : PlanCausesSince(generation)) {
    if (cause.find("(iad agent)") != std::string::npos) {
      EXPECT_THAT(cause, Not(HasSubstr("chi-iad"))) << cause;
    }
  }
}

TEST_F(EndToEndTest, RolesAndSiteIdentitiesAreEnforced) {
  ASSERT_EQ(AwaitConverged(seconds(60)), absl::OkStatus());
  const uint64_t generation = GetPlan()->plan().generation();
  {  // A viewer reads but cannot drain.
    auto viewer = lab_->OperatorClient("viewer");
    grpc::ClientContext read_context;
    v1::ListFacilitiesResponse facilities;
    EXPECT_TRUE(viewer->ListFacilities(&read_context, {}, &facilities).ok());
    EXPECT_EQ(facilities.facilities_size(), 8);
    grpc::ClientContext context;
    v1::AddIntentRequest drain;
    drain.mutable_intent()->set_id("drain-iad");
    drain.mutable_intent()->mutable_drain()->mutable_target()->set_facility_id("iad");
    v1::AddIntentResponse response;
    EXPECT_EQ(viewer->AddIntent(&context, drain, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {  // An agent is not an operator.
    auto stub = v1::Operator::NewStub(Channel(lab_->agent_tls("iad")));
    grpc::ClientContext context;
    v1::ListLinksResponse response;
    EXPECT_EQ(stub->ListLinks(&context, {}, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {  // iad's routerd may not watch chi's plan.
    tls::TlsFiles routerd{lab_->pki_dir() + "/ca.crt", lab_->pki_dir() + "/site-iad-routerd.crt",
                          lab_->pki_dir() + "/site-iad-routerd.key"};
    auto stub = v1::PlanService::NewStub(Channel(routerd));
    grpc::ClientContext context;
    v1::WatchPlanRequest request;
    request.set_facility_id("chi");
    auto reader = stub->Watch(&context, request);
    v1::SitePlan plan;
    EXPECT_FALSE(reader->Read(&plan));
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  // The refused drain re-planned nothing.
  for (const std::string& cause : PlanCausesSince(generation)) EXPECT_THAT(cause, Not(HasSubstr("drain-iad"))) << cause;
}

TEST_F(EndToEndTest, OperatorDrainMovesTrafficAndUndrainRestoresIt) {
  ASSERT_EQ(AwaitConverged(seconds(60)), absl::OkStatus());
  auto admin = lab_->OperatorClient("admin");
  grpc::ClientContext context;
  v1::AddIntentRequest drain;
  drain.mutable_intent()->set_id("drain-chi");
  drain.mutable_intent()->mutable_drain()->mutable_target()->set_facility_id("chi");
  v1::AddIntentResponse response;
  ASSERT_TRUE(admin->AddIntent(&context, drain, &response).ok());
  auto plan = GetPlan();
  ASSERT_TRUE(plan);
  // Published before the answer (a probe's flap may have re-planned since).
  EXPECT_GE(plan->plan().generation(), response.plan_generation());
  for (const auto& site : plan->plan().sites()) {
    for (const auto& route : site.routes()) {
      for (const auto& hop : site_plan::NextHops(site, site_plan::PrimaryGroup(site, route))) {
        EXPECT_NE(hop.peer_facility_id(), "chi");
      }
    }
  }
  grpc::ClientContext undrain_context;
  v1::DeleteIntentRequest undrain;
  undrain.set_id("drain-chi");
  v1::DeleteIntentResponse undrained;
  ASSERT_TRUE(admin->DeleteIntent(&undrain_context, undrain, &undrained).ok());
  EXPECT_GT(undrained.plan_generation(), response.plan_generation());
  ASSERT_EQ(AwaitConverged(seconds(30)), absl::OkStatus());
}

}  // namespace
}  // namespace geodesic
