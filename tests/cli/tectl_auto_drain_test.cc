// Gray failures end to end: real agents report a fiber lossy (through their
// health files), the real pathcomp judges it from both ends and drains it by
// itself; tectl shows the verdict with its evidence, the audit log names the
// replica, `tectl undrain` undoes it; a pause holds the drainer and says so;
// a drain that would cut a workload is refused and alerted; a measurement
// storm drains nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "geodesic/v1/operator.grpc.pb.h"
#include "sim/wait_until.h"
#include "tests/cli/tectl_testing.h"
#include "tests/support/lab_testing.h"

namespace geodesic::cli {
namespace {

using ::testing::HasSubstr;
using namespace ::geodesic::cli::tectl_testing;  // NOLINT: test helpers
using std::chrono::seconds;

constexpr char kController[] = "spiffe://geodesic/pathcomp/pc1";

// Every event of pathcomp's WatchEvents from the moment it is made.
class EventLog {
 public:
  explicit EventLog(std::shared_ptr<v1::Operator::Stub> stub) : stub_(std::move(stub)) {
    reader_ = stub_->WatchEvents(&context_, v1::WatchEventsRequest());
    v1::Event first;
    subscribed_ = reader_->Read(&first) && first.has_subscribed();
    thread_ = std::thread([this] {
      v1::Event event;
      while (reader_->Read(&event)) {
        std::lock_guard lock(mu_);
        events_.push_back(event);
      }
    });
  }
  ~EventLog() {
    context_.TryCancel();
    thread_.join();
  }
  bool subscribed() const { return subscribed_; }

  // Waits for an automatic-drain event with `action` naming `link_id`.
  absl::StatusOr<v1::AutoDrainEvent> Await(v1::AutoDrainEvent::Action action, const std::string& link_id) {
    v1::AutoDrainEvent found;
    const absl::Status status = sim::WaitUntil(
        absl::StrCat("an auto-drain event ", v1::AutoDrainEvent::Action_Name(action), " of ", link_id), seconds(60),
        [&] {
          std::lock_guard lock(mu_);
          for (const v1::Event& event : events_) {
            if (!event.has_auto_drain() || event.auto_drain().action() != action) continue;
            const auto& links = event.auto_drain().link_ids();
            if (link_id.empty() || std::find(links.begin(), links.end(), link_id) != links.end()) {
              found = event.auto_drain();
              return true;
            }
          }
          return false;
        });
    if (!status.ok()) return status;
    return found;
  }

 private:
  std::shared_ptr<v1::Operator::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderInterface<v1::Event>> reader_;
  bool subscribed_ = false;
  std::thread thread_;
  std::mutex mu_;
  std::vector<v1::Event> events_;
};

class TectlAutoDrainTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    work_ = new TempDir("auto-drain");
    sim::LabOptions options = testing::LabOptionsFor(work_->path());
    // Quick to act, slow to give back: the test undoes drains by hand.
    options.pathcomp_extra_config = "auto_drain: {hold_s: 2, undrain_hold_s: 3600}\n";
    auto lab = sim::LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = lab->release();
    client_ = new sim::LabClient(*lab_);
    ASSERT_TRUE(lab_->StartPathcomp().ok());
    for (const auto& facility : lab_->topology().facilities) ASSERT_TRUE(lab_->StartAgent(facility.id()).ok());
    ASSERT_TRUE(client_->WaitLinksIn(v1::OPER_STATE_UP, seconds(30)).ok());
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

  static TectlRun Online(std::vector<std::string> args, const std::string& operator_name = "admin") {
    const tls::TlsFiles tls = lab_->operator_tls(operator_name);
    std::vector<std::string> argv = {"--server", lab_->pathcomp_address(), "--ca", tls.ca_path, "--cert",
                                     tls.cert_path, "--key", tls.key_path};
    argv.insert(argv.end(), args.begin(), args.end());
    return Tectl(argv);
  }

  // Both directions of a fiber lossy ("" restores them).
  static void SetFiberLoss(const std::string& forward, const std::string& back, double loss) {
    const std::string fields = loss > 0 ? absl::StrCat("state: degraded, loss_ratio: ", loss) : "";
    ASSERT_TRUE(lab_->SetLinkHealth(forward, fields).ok());
    ASSERT_TRUE(lab_->SetLinkHealth(back, fields).ok());
  }

  static std::vector<v1::Intent> AutomaticIntents() {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    v1::ListIntentsResponse response;
    EXPECT_TRUE(stub->ListIntents(&context, v1::ListIntentsRequest(), &response).ok());
    std::vector<v1::Intent> automatic;
    for (const v1::Intent& intent : response.intents()) {
      if (intent.automatic()) automatic.push_back(intent);
    }
    return automatic;
  }

  static bool AutomaticallyDrained(const std::string& link_id) {
    for (const v1::Intent& intent : AutomaticIntents()) {
      if (intent.drain().target().link_id() == link_id) return true;
    }
    return false;
  }

  static v1::AutoDrainStatus Status() {
    auto stub = lab_->OperatorClient("viewer");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    v1::AutoDrainStatus status;
    EXPECT_TRUE(stub->GetAutoDrainStatus(&context, v1::GetAutoDrainStatusRequest(), &status).ok());
    return status;
  }

  static TempDir* work_;
  static sim::LocalLab* lab_;
  static sim::LabClient* client_;
  static bool failed_;
};

TempDir* TectlAutoDrainTest::work_ = nullptr;
sim::LocalLab* TectlAutoDrainTest::lab_ = nullptr;
sim::LabClient* TectlAutoDrainTest::client_ = nullptr;
bool TectlAutoDrainTest::failed_ = false;

TEST_F(TectlAutoDrainTest, ALossyFiberIsDrainedByPathcompAndUndoneByUndrain) {
  EventLog events(lab_->OperatorClient("viewer"));
  ASSERT_TRUE(events.subscribed());
  SetFiberLoss("nyc-lon", "lon-nyc", 0.05);

  auto drained = events.Await(v1::AutoDrainEvent::ACTION_DRAINED, "nyc-lon");
  ASSERT_TRUE(drained.ok()) << drained.status();
  EXPECT_THAT(drained->link_ids(), ::testing::ElementsAre("lon-nyc", "nyc-lon"));
  EXPECT_EQ(drained->verdict(), v1::LINK_VERDICT_LOSSY);
  EXPECT_THAT(drained->reason(), HasSubstr("loss 5.0%"));
  const std::vector<v1::Intent> intents = AutomaticIntents();
  ASSERT_EQ(intents.size(), 2u);
  for (const v1::Intent& intent : intents) {
    EXPECT_EQ(intent.created_by(), kController);
    EXPECT_THAT(intent.reason(), HasSubstr("auto-drain: lossy"));
  }

  // Traffic left the fiber once the plan with the drain is everywhere.
  auto converged = client_->WaitConverged({.timeout = seconds(30), .at_routers = false});
  ASSERT_TRUE(converged.ok()) << converged.status();
  for (const v1::LinkLoad& load : converged->plan().elephants().links()) {
    if (load.link_id() == "nyc-lon" || load.link_id() == "lon-nyc") EXPECT_EQ(load.load_gbps(), 0) << load.link_id();
  }

  // tectl shows the verdict with the evidence of both ends.
  TectlRun describe = Online({"describe", "link", "nyc-lon"}, "viewer");
  ASSERT_EQ(describe.exit_code, 0) << describe;
  EXPECT_THAT(describe.out, HasSubstr("verdict: lossy"));
  EXPECT_THAT(describe.out, HasSubstr("confirmed: true"));
  EXPECT_THAT(describe.out, HasSubstr("near-end probes (nyc): lossy, loss 5.0%"));
  EXPECT_THAT(describe.out, HasSubstr("far-end probes (lon): lossy, reverse link lon-nyc: loss 5.0%"));
  TectlRun status = Online({"auto-drain", "status"}, "viewer");
  ASSERT_EQ(status.exit_code, 0) << status;
  EXPECT_THAT(status.out, HasSubstr("automatic drains: active"));
  EXPECT_THAT(status.out, HasSubstr("auto-nyc-lon-"));

  // Audited as the replica's own doing.
  TectlRun audit = Online({"audit-log", "-o", "json"}, "viewer");
  ASSERT_EQ(audit.exit_code, 0) << audit;
  EXPECT_THAT(audit.out, HasSubstr("automatic drain"));
  EXPECT_THAT(audit.out, HasSubstr(kController));

  // An operator takes it back; the drainer does not take it again while the fiber stays lossy.
  TectlRun undrain = Online({"undrain", "link", "nyc-lon"});
  ASSERT_EQ(undrain.exit_code, 0) << undrain;
  EXPECT_THAT(undrain.out, HasSubstr("undrained link nyc-lon"));
  EXPECT_TRUE(AutomaticIntents().empty());
  SetFiberLoss("nyc-lon", "lon-nyc", 0);
  ASSERT_TRUE(sim::WaitUntil("nyc-lon healthy again", seconds(30), [] {
                return Status().tripped().empty();
              }).ok());
}

TEST_F(TectlAutoDrainTest, APauseHoldsTheDrainerAndSaysWhy) {
  TectlRun pause = Online({"auto-drain", "pause", "--reason", "fiber work on iad-ams"}, "admin");
  ASSERT_EQ(pause.exit_code, 0) << pause;
  EventLog events(lab_->OperatorClient("viewer"));
  ASSERT_TRUE(events.subscribed());
  SetFiberLoss("iad-ams", "ams-iad", 0.1);

  auto held = events.Await(v1::AutoDrainEvent::ACTION_HELD, "iad-ams");
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_THAT(held->reason(), HasSubstr("paused by spiffe://geodesic/operator/admin: fiber work on iad-ams"));
  EXPECT_FALSE(AutomaticallyDrained("iad-ams"));
  const v1::AutoDrainStatus status = Status();
  EXPECT_TRUE(status.paused());
  EXPECT_EQ(status.pause_reason(), "fiber work on iad-ams");

  TectlRun resume = Online({"auto-drain", "resume"}, "admin");
  ASSERT_EQ(resume.exit_code, 0) << resume;
  ASSERT_TRUE(events.Await(v1::AutoDrainEvent::ACTION_DRAINED, "iad-ams").ok());
  EXPECT_TRUE(AutomaticallyDrained("ams-iad"));

  ASSERT_EQ(Online({"undrain", "link", "ams-iad"}).exit_code, 0);
  SetFiberLoss("iad-ams", "ams-iad", 0);
  EXPECT_EQ(Online({"auto-drain", "resume"}, "admin").exit_code, 1) << "not paused any more";
}

TEST_F(TectlAutoDrainTest, ADrainThatWouldCutAWorkloadIsRefusedAndAlerted) {
  // A flow that can only cross the Atlantic: with one cable drained, the
  // other is its last path.
  TectlRun add = Online({"workload", "add", "xatl-nyc-lon", "--src", "nyc", "--to", "10.7.0.0/16", "--gbps", "50"});
  ASSERT_EQ(add.exit_code, 0) << add;
  EventLog events(lab_->OperatorClient("viewer"));
  ASSERT_TRUE(events.subscribed());
  SetFiberLoss("nyc-lon", "lon-nyc", 0.05);
  ASSERT_TRUE(events.Await(v1::AutoDrainEvent::ACTION_DRAINED, "nyc-lon").ok());
  SetFiberLoss("iad-ams", "ams-iad", 0.05);
  auto refused = events.Await(v1::AutoDrainEvent::ACTION_REFUSED, "iad-ams");
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_THAT(refused->reason(), HasSubstr("refused by the pre-check"));
  EXPECT_THAT(refused->reason(), HasSubstr("xatl-nyc-lon"));
  EXPECT_FALSE(AutomaticallyDrained("iad-ams"));
  TectlRun audit = Online({"audit-log", "-o", "json"}, "viewer");
  EXPECT_THAT(audit.out, HasSubstr("automatic drain refused by the pre-check"));

  ASSERT_EQ(Online({"undrain", "link", "nyc-lon"}).exit_code, 0);
  SetFiberLoss("nyc-lon", "lon-nyc", 0);
  SetFiberLoss("iad-ams", "ams-iad", 0);
  ASSERT_EQ(Online({"workload", "remove", "xatl-nyc-lon"}).exit_code, 0);
}

TEST_F(TectlAutoDrainTest, AMeasurementStormDrainsNothing) {
  EventLog events(lab_->OperatorClient("viewer"));
  ASSERT_TRUE(events.subscribed());
  // Four fibers at once: more than fail_open_links (3).
  for (const auto& [forward, back] : std::vector<std::pair<std::string, std::string>>{
           {"iad-dfw", "dfw-iad"}, {"chi-den", "den-chi"}, {"den-sjc", "sjc-den"}, {"dfw-sjc", "sjc-dfw"}}) {
    SetFiberLoss(forward, back, 0.3);
  }
  auto fail_open = events.Await(v1::AutoDrainEvent::ACTION_FAIL_OPEN, "");
  ASSERT_TRUE(fail_open.ok()) << fail_open.status();
  EXPECT_THAT(fail_open->reason(), HasSubstr("the measurement is suspected"));
  EXPECT_TRUE(Status().failed_open());
  EXPECT_TRUE(AutomaticIntents().empty());
  for (const auto& [forward, back] : std::vector<std::pair<std::string, std::string>>{
           {"iad-dfw", "dfw-iad"}, {"chi-den", "den-chi"}, {"den-sjc", "sjc-den"}, {"dfw-sjc", "sjc-dfw"}}) {
    SetFiberLoss(forward, back, 0);
  }
}

}  // namespace
}  // namespace geodesic::cli
