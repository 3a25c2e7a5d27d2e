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
#include "sim/lab_client.h"
#include "sim/local_lab.h"
#include "sim/make_pki.h"

namespace geodesic {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using sim::LocalLab;
using std::chrono::seconds;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("geodesic-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

class EndToEndTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sim::LabOptions options;
    options.source_dir = Env("GEODESIC_SOURCE_DIR");
    options.binary_dir = Env("GEODESIC_BINARY_DIR");
    options.work_dir = TempDir("e2e");
    options.topology_path = options.source_dir + "/deploy/examples/backbone.yaml";
    options.probe_interval_ms = 0;  // link health from the agents' static source: no probe flaps
    auto lab = LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = lab->release();
    ASSERT_TRUE(lab_->StartAll().ok());
  }

  static void TearDownTestSuite() {
    if (lab_ != nullptr) {
      const std::string dir = lab_->work_dir();
      delete lab_;
      lab_ = nullptr;
      if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir);
    }
  }

  void SetUp() override { ASSERT_NE(lab_, nullptr); }

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

  // Every link measured up, and pathcomp says the plan reflects the model and
  // is at every site's routers (sim::ConvergenceGap).
  static bool Converged() { return Gap().empty(); }
  // What keeps the lab from being converged, in words.
  static std::string Gap() {
    for (const auto& link : Links()) {
      if (link.health().state() != v1::OPER_STATE_UP) return "link " + link.id() + " is not up";
    }
    auto plan = GetPlan();
    if (!plan) return "no plan";
    if (!plan->plan().unreachable().empty()) return "some facility pair is unreachable";
    std::vector<std::string> facilities;
    for (const auto& facility : lab_->topology().facilities) facilities.push_back(facility.id());
    return sim::ConvergenceGap(*plan, facilities);
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
      if (route.prefix() == "10.3.0.0/16" && route.next_hops_size() > 0) return route.next_hops(0).link_id();
    }
    return "";
  }

  static std::shared_ptr<grpc::Channel> Channel(const tls::TlsFiles& files) {
    return grpc::CreateChannel(lab_->pathcomp_address(),
                               tls::MakeChannelCredentials(files, tls::Identity::Kind::kPathcomp));
  }

  static LocalLab* lab_;
};

LocalLab* EndToEndTest::lab_ = nullptr;

TEST_F(EndToEndTest, RouterdReceivesThePlanComputedFromAgentReports) {
  ASSERT_TRUE(LocalLab::WaitFor(Converged, seconds(60))) << "not converged: " << Gap();
  auto plan = GetPlan();
  ASSERT_TRUE(plan);
  // iad reaches chi directly: the fiber the iad agent reported up.
  bool found = false;
  for (const auto& site : plan->plan().sites()) {
    if (site.facility_id() != "iad") continue;
    for (const auto& route : site.routes()) {
      if (route.prefix() != "10.3.0.0/16") continue;
      found = true;
      ASSERT_EQ(route.next_hops_size(), 1);
      EXPECT_EQ(route.next_hops(0).link_id(), "iad-chi");
    }
  }
  EXPECT_TRUE(found);
  // iad's routerd has that plan (its state, not its log).
  EXPECT_EQ(ViaAtIad(), "iad-chi");

  // A cut reported by the agents moves the route, and routerd installs that.
  ASSERT_TRUE(lab_->SetLinkState("iad-chi", "down").ok());
  const sim::LabClient client(*lab_);
  auto revision = client.WaitLinkStates({"iad-chi"}, v1::OPER_STATE_DOWN, seconds(30));
  ASSERT_TRUE(revision.ok()) << revision.status();
  auto moved = client.WaitConverged({.timeout = seconds(30), .min_model_revision = *revision});
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(ViaAtIad(), "iad-nyc");
  ASSERT_TRUE(lab_->SetLinkState("iad-chi", "up").ok());
  ASSERT_TRUE(LocalLab::WaitFor(Converged, seconds(30))) << "not converged: " << Gap();
}

TEST_F(EndToEndTest, ClientWithoutCertificateIsRefused) {
  ASSERT_TRUE(LocalLab::WaitFor(Converged, seconds(60))) << "not converged: " << Gap();
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
  ASSERT_TRUE(LocalLab::WaitFor(Converged, seconds(60))) << "not converged: " << Gap();
  const std::string other = TempDir("other-ca");
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
  std::filesystem::remove_all(other);
}

TEST_F(EndToEndTest, AgentClaimingAnotherFacilitysLinksIsRefusedAndChangesNothing) {
  ASSERT_TRUE(LocalLab::WaitFor(Converged, seconds(60))) << "not converged: " << Gap();
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
  ASSERT_TRUE(LocalLab::WaitFor(Converged, seconds(60))) << "not converged: " << Gap();
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
  ASSERT_TRUE(LocalLab::WaitFor(Converged, seconds(60))) << "not converged: " << Gap();
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
      for (const auto& hop : route.next_hops()) EXPECT_NE(hop.peer_facility_id(), "chi");
    }
  }
  grpc::ClientContext undrain_context;
  v1::DeleteIntentRequest undrain;
  undrain.set_id("drain-chi");
  v1::DeleteIntentResponse undrained;
  ASSERT_TRUE(admin->DeleteIntent(&undrain_context, undrain, &undrained).ok());
  EXPECT_GT(undrained.plan_generation(), response.plan_generation());
  ASSERT_TRUE(LocalLab::WaitFor(Converged, seconds(30))) << "not converged: " << Gap();
}

}  // namespace
}  // namespace geodesic
