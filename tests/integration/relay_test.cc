// The telemetry relay against a real pathcomp and the real agents, over mTLS
// with make-pki.sh's tenant certificates: a tenant watches its own workloads'
// paths hop by hop, sees a reroute with its cause when a link of its path goes
// down, learns nothing of another tenant's workloads (by id guessing neither),
// and every identity but a tenant's or an operator's is refused. The Python
// example client (examples/relay_watch.py) is run as a tenant too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "geodesic/v1/relay.grpc.pb.h"
#include "geodesic/v1/telemetry.grpc.pb.h"
#include "sim/process.h"
#include "tests/support/lab_testing.h"

namespace geodesic {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;
using sim::LocalLab;
using std::chrono::seconds;

// What acme must never hear of: beta's workloads, the link only beta's flow
// uses, and the operators' own workloads.
const std::vector<std::string> kNotAcmes = {"beta", "sjc-den", "dataset-ams-lon", "rag-nyc", "ckpt-iad-dfw"};

v1::Workload Elephant(const std::string& id, const std::string& tenant, const std::string& src,
                      const std::string& prefix) {
  v1::Workload workload;
  workload.set_id(id);
  workload.set_tenant(tenant);
  workload.mutable_elephant()->set_src_facility_id(src);
  workload.mutable_elephant()->set_dst_prefix(prefix);
  workload.mutable_elephant()->set_demand_gbps(5);
  return workload;
}

// One Relay.Watch stream; reads wait at most until the stream's deadline.
class Watch {
 public:
  Watch(const std::string& address, const tls::TlsFiles& files, const v1::RelayWatchRequest& request) {
    stub_ = v1::Relay::NewStub(
        grpc::CreateChannel(address, tls::MakeChannelCredentials(files, tls::Identity::Kind::kPathcomp)));
    context_.set_deadline(std::chrono::system_clock::now() + seconds(60));
    reader_ = stub_->Watch(&context_, request);
  }
  ~Watch() {
    if (finished_) return;
    context_.TryCancel();
    reader_->Finish().ok();  // cancelled: nothing to learn
  }

  // Reads until `done` says so; false when the stream ended or timed out first.
  bool ReadUntil(const std::function<bool(const v1::RelayEvent&)>& done) {
    v1::RelayEvent event;
    while (reader_->Read(&event)) {
      events_.push_back(event);
      text_ += event.DebugString();
      if (done(event)) return true;
    }
    return false;
  }
  // The stream's end: its status (the reads are over).
  grpc::Status Finish() {
    v1::RelayEvent event;
    while (reader_->Read(&event)) text_ += event.DebugString();
    finished_ = true;
    return reader_->Finish();
  }

  const std::vector<v1::RelayEvent>& events() const { return events_; }
  const std::string& text() const { return text_; }

 private:
  std::unique_ptr<v1::Relay::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::RelayEvent>> reader_;
  std::vector<v1::RelayEvent> events_;
  std::string text_;
  bool finished_ = false;
};

bool SnapshotDone(const v1::RelayEvent& event) { return event.has_snapshot_done(); }

v1::RelayWatchRequest Request(std::vector<std::string> ids = {}, const std::string& tenant = "") {
  v1::RelayWatchRequest request;
  for (auto& id : ids) request.add_workload_ids(id);
  request.set_tenant(tenant);
  return request;
}

bool UsesLink(const v1::RelayWorkload& workload, const std::string& link) {
  for (const auto& path : workload.paths()) {
    for (const auto& hop : path.hops()) {
      if (hop.link_id() == link) return true;
    }
  }
  return false;
}

class RelayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    work_ = new testing::TempDir("relay");
    auto lab = LocalLab::Create(testing::LabOptionsFor(work_->path()));
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = lab->release();
    client_ = new sim::LabClient(*lab_);
    // The lab's PKI has its operators; the tenants' certificates come from the same CA.
    ASSERT_TRUE(sim::RunMakePki(lab_->pki_dir(), {"--tenants", "acme,beta"}).ok());
    ASSERT_TRUE(lab_->StartPathcomp().ok());
    for (const auto& facility : lab_->topology().facilities) ASSERT_TRUE(lab_->StartAgent(facility.id()).ok());
    ASSERT_TRUE(client_->WaitLinksIn(v1::OPER_STATE_UP, seconds(60)).ok());
    auto stub = lab_->OperatorClient("admin");
    for (const v1::Workload& workload :
         {Elephant("acme-sync", "acme", "lon", "10.8.0.0/16"), Elephant("acme-backup", "acme", "iad", "10.3.0.0/16"),
          Elephant("beta-sync", "beta", "sjc", "10.5.0.0/16")}) {
      grpc::ClientContext context;
      v1::AddWorkloadRequest request;
      *request.mutable_workload() = workload;
      v1::AddWorkloadResponse response;
      const grpc::Status added = stub->AddWorkload(&context, request, &response);
      ASSERT_TRUE(added.ok()) << added.error_message();
    }
    ASSERT_TRUE(AwaitPlanned().ok());
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

  // The controller has planned everything the model holds now.
  static absl::Status AwaitPlanned() {
    auto seen = client_->Plan();
    if (!seen.ok()) return seen.status();
    return client_->WaitConverged({.timeout = seconds(30), .min_model_revision = seen->model_revision(),
                                   .at_routers = false})
        .status();
  }

  static tls::TlsFiles Tenant(const std::string& name) {
    return {.ca_path = lab_->pki_dir() + "/ca.crt",
            .cert_path = lab_->pki_dir() + "/tenant-" + name + ".crt",
            .key_path = lab_->pki_dir() + "/tenant-" + name + ".key"};
  }

  static inline testing::TempDir* work_ = nullptr;
  static inline LocalLab* lab_ = nullptr;
  static inline sim::LabClient* client_ = nullptr;
  static inline bool failed_ = false;
};

TEST_F(RelayTest, ATenantsSnapshotIsItsOwnWorkloadsHopByHop) {
  Watch watch(lab_->pathcomp_address(), Tenant("acme"), Request());
  ASSERT_TRUE(watch.ReadUntil(SnapshotDone)) << watch.text();
  std::set<std::string> ids;
  for (const auto& event : watch.events()) {
    if (event.has_workload()) ids.insert(event.workload().workload_id());
  }
  EXPECT_THAT(ids, UnorderedElementsAre("acme-sync", "acme-backup"));
  EXPECT_EQ(watch.events().back().snapshot_done().workloads(), 2u);
  const v1::RelayWorkload& sync = watch.events()[1].workload();  // by id: acme-backup, acme-sync
  ASSERT_EQ(sync.workload_id(), "acme-sync");
  ASSERT_TRUE(sync.routed()) << sync.DebugString();
  ASSERT_GE(sync.paths_size(), 1);
  const v1::RelayPath& path = sync.paths(0);
  EXPECT_EQ(path.facility_ids(0), "lon");
  EXPECT_EQ(path.facility_ids(path.facility_ids_size() - 1), "ams");
  ASSERT_GE(path.hops_size(), 1);
  EXPECT_FALSE(path.hops(0).link_id().empty());
  EXPECT_GT(path.hops(0).latency_us(), 0u);
  EXPECT_EQ(path.hops(0).state(), v1::OPER_STATE_UP);
  EXPECT_GT(path.total_latency_us(), 0u);
  for (const std::string& foreign : kNotAcmes) EXPECT_THAT(watch.text(), Not(HasSubstr(foreign))) << foreign;
}

TEST_F(RelayTest, ALinkDownOnATenantsPathIsARerouteWithItsCause) {
  Watch watch(lab_->pathcomp_address(), Tenant("acme"), Request({"acme-sync"}));
  ASSERT_TRUE(watch.ReadUntil(SnapshotDone)) << watch.text();
  ASSERT_TRUE(UsesLink(watch.events()[0].workload(), "lon-ams")) << watch.text();
  ASSERT_TRUE(lab_->SetLinkState("lon-ams", "down").ok());
  ASSERT_TRUE(watch.ReadUntil([](const v1::RelayEvent& event) { return event.has_reroute(); })) << watch.text();
  const v1::RelayReroute& reroute = watch.events().back().reroute();
  EXPECT_EQ(reroute.workload_id(), "acme-sync");
  EXPECT_THAT(reroute.cause(), HasSubstr("link lon-ams down"));
  EXPECT_GT(reroute.generation(), 0u);
  EXPECT_TRUE(UsesLink(reroute.previous(), "lon-ams"));
  EXPECT_TRUE(reroute.current().routed()) << reroute.DebugString();
  EXPECT_FALSE(UsesLink(reroute.current(), "lon-ams")) << reroute.DebugString();
  for (const std::string& foreign : kNotAcmes) EXPECT_THAT(watch.text(), Not(HasSubstr(foreign))) << foreign;

  // Back up: the flow returns to it, again as a reroute.
  ASSERT_TRUE(lab_->SetLinkState("lon-ams", "up").ok());
  ASSERT_TRUE(watch.ReadUntil([](const v1::RelayEvent& event) {
    return event.has_reroute() && UsesLink(event.reroute().current(), "lon-ams");
  })) << watch.text();
  ASSERT_TRUE(AwaitPlanned().ok());
}

TEST_F(RelayTest, GuessingAnotherTenantsIdIsNotFoundLikeNoId) {
  Watch theirs(lab_->pathcomp_address(), Tenant("acme"), Request({"beta-sync"}));
  const grpc::Status refused = theirs.Finish();
  Watch nobodys(lab_->pathcomp_address(), Tenant("acme"), Request({"gamma-sync"}));
  const grpc::Status missing = nobodys.Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(refused.error_message(), "unknown workload beta-sync");
  EXPECT_EQ(missing.error_message(), "unknown workload gamma-sync");
  EXPECT_TRUE(theirs.events().empty());
  // Naming the other tenant outright is refused.
  Watch as_beta(lab_->pathcomp_address(), Tenant("acme"), Request({}, "beta"));
  EXPECT_EQ(as_beta.Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(RelayTest, OnlyTenantsAndOperatorsMayWatch) {
  Watch agent(lab_->pathcomp_address(), lab_->agent_tls("lon"), Request());
  const grpc::Status refused = agent.Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED) << refused.error_message();
  EXPECT_THAT(refused.error_message(), HasSubstr("tenants and operators"));

  // An operator (a viewer will do) sees everyone's, or one tenant's.
  Watch all(lab_->pathcomp_address(), lab_->operator_tls("viewer"), Request());
  ASSERT_TRUE(all.ReadUntil(SnapshotDone)) << all.text();
  EXPECT_THAT(all.text(), HasSubstr("beta-sync"));
  EXPECT_THAT(all.text(), HasSubstr("acme-sync"));
  EXPECT_THAT(all.text(), HasSubstr("rag-nyc"));
  Watch beta(lab_->pathcomp_address(), lab_->operator_tls("viewer"), Request({}, "beta"));
  ASSERT_TRUE(beta.ReadUntil(SnapshotDone)) << beta.text();
  EXPECT_EQ(beta.events().back().snapshot_done().workloads(), 1u);
  EXPECT_THAT(beta.text(), Not(HasSubstr("acme")));
}

// A tenant's certificate opens nothing but the relay: the Operator API
// (which needs an operator) and Telemetry (which needs an agent) refuse it.
TEST_F(RelayTest, ATenantIsRefusedByTheOtherServices) {
  auto channel = grpc::CreateChannel(lab_->pathcomp_address(),
                                     tls::MakeChannelCredentials(Tenant("acme"), tls::Identity::Kind::kPathcomp));
  {
    auto operators = v1::Operator::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    v1::ListWorkloadsResponse response;
    const grpc::Status status = operators->ListWorkloads(&context, {}, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
    EXPECT_EQ(response.workloads_size(), 0);
  }
  {
    auto telemetry = v1::Telemetry::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    auto stream = telemetry->Report(&context);
    v1::AgentMessage hello;
    hello.mutable_hello()->set_facility_id("lon");
    stream->Write(hello);
    stream->WritesDone();
    v1::ControllerMessage reply;
    while (stream->Read(&reply)) {
    }
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
}

// The example client, on Debian's python3-grpcio with stubs generated now.
TEST_F(RelayTest, ThePythonExampleSeesItsOwnWorkloadHopByHop) {
  const std::string stubs = work_->Join("python-stubs");
  const std::string proto = testing::SourceDir() + "/proto";
  auto generated = sim::RunCommand(
      {"/bin/sh", "-c",
       "mkdir -p " + stubs + " && " + GEODESIC_DEBIAN_PYTHON + " -m grpc_tools.protoc -I " + proto +
           " --python_out=" + stubs + " --grpc_python_out=" + stubs + " " + proto + "/geodesic/v1/relay.proto " +
           proto + "/geodesic/v1/model.proto " + proto + "/geodesic/v1/plan.proto"});
  ASSERT_TRUE(generated.ok()) << generated.status();
  ASSERT_EQ(generated->exit_code, 0) << generated->output;
  const tls::TlsFiles acme = Tenant("acme");
  const std::vector<std::string> common = {GEODESIC_DEBIAN_PYTHON, testing::SourceDir() + "/examples/relay_watch.py",
                                           "--stubs", stubs, "--server", lab_->pathcomp_address(),
                                           "--ca", acme.ca_path, "--cert", acme.cert_path, "--key", acme.key_path,
                                           "--count", "3", "--timeout", "30"};
  std::vector<std::string> json = common;
  json.push_back("--json");
  auto run = sim::RunCommand(json);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->exit_code, 0) << run->output;
  std::set<std::string> ids;
  bool done = false;
  for (absl::string_view line : absl::StrSplit(run->output, '\n')) {
    if (!absl::StartsWith(line, "{")) continue;  // Python's own warnings, if any
    if (line.find("\"snapshot_done\"") != absl::string_view::npos) done = true;
    for (const char* id : {"acme-sync", "acme-backup"}) {
      if (line.find(std::string("\"workload_id\": \"") + id + "\"") != absl::string_view::npos) ids.insert(id);
    }
  }
  EXPECT_TRUE(done) << run->output;
  EXPECT_THAT(ids, UnorderedElementsAre("acme-sync", "acme-backup")) << run->output;
  EXPECT_THAT(run->output, HasSubstr("\"link_id\": \"lon-ams\"")) << run->output;
  for (const std::string& foreign : kNotAcmes) EXPECT_THAT(run->output, Not(HasSubstr(foreign))) << foreign;

  auto readable = sim::RunCommand(common);
  ASSERT_TRUE(readable.ok()) << readable.status();
  ASSERT_EQ(readable->exit_code, 0) << readable->output;
  std::cerr << readable->output << run->output.substr(0, 1500);
  EXPECT_THAT(readable->output, HasSubstr("workload acme-sync (elephant, tenant acme)"));
  EXPECT_THAT(readable->output, HasSubstr("lon -> ams over lon-ams"));
  EXPECT_THAT(readable->output, HasSubstr("snapshot complete: 2 workloads"));

  // A refused watch is an error and an exit code, not a hang.
  std::vector<std::string> guessing = common;
  guessing.insert(guessing.end(), {"--workload", "beta-sync"});
  auto refused = sim::RunCommand(guessing);
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->exit_code, 2) << refused->output;
  EXPECT_THAT(refused->output, HasSubstr("NOT_FOUND: unknown workload beta-sync"));
}

}  // namespace
}  // namespace geodesic
