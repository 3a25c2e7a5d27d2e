// Controller and routerd restarts with real processes: agents buffer while
// pathcomp is gone and resume after what it last applied; routerd keeps its
// routes while no controller answers (fail-static) and restores them after
// its own restart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "sim/local_lab.h"

namespace geodesic {
namespace {

using ::testing::HasSubstr;
using sim::LocalLab;
using std::chrono::seconds;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class RestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::LabOptions options;
    options.source_dir = std::getenv("GEODESIC_SOURCE_DIR");
    options.binary_dir = std::getenv("GEODESIC_BINARY_DIR");
    options.work_dir = (std::filesystem::temp_directory_path() /
                        ("geodesic-restart-" + std::to_string(::getpid())))
                           .string();
    std::filesystem::remove_all(options.work_dir);
    options.topology_path = options.source_dir + "/deploy/examples/backbone.yaml";
    // Link health is configured, not probed: on busy cores 10 ms probes flap
    // (once all four of iad's links at once), and this test is about restarts.
    options.probe_interval_ms = 0;
    auto lab = LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    ASSERT_TRUE(lab_->StartAll().ok());
    ASSERT_TRUE(LocalLab::WaitFor([&] { return Converged(); }, seconds(60)));
  }

  void TearDown() override {
    const std::string dir = lab_ ? lab_->work_dir() : "";
    lab_.reset();
    if (!HasFailure() && !dir.empty()) std::filesystem::remove_all(dir);
  }

  std::optional<v1::GetPlanResponse> GetPlan() {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(2));
    v1::GetPlanResponse response;
    if (!stub->GetPlan(&context, {}, &response).ok()) return std::nullopt;
    return response;
  }

  std::optional<v1::Link> Link(const std::string& id) {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(2));
    v1::ListLinksResponse response;
    if (!stub->ListLinks(&context, {}, &response).ok()) return std::nullopt;
    for (const auto& link : response.links()) {
      if (link.id() == id) return link;
    }
    return std::nullopt;
  }

  // The current plan is installed at every site.
  bool Converged() {
    auto plan = GetPlan();
    if (!plan || !plan->plan().unreachable().empty()) return false;
    size_t installed = 0;
    for (const auto& site : plan->sites()) {
      installed += site.installed() && site.generation() == plan->plan().generation();
    }
    return installed == lab_->topology().facilities.size();
  }

  std::string NextHopFromTo(const v1::Plan& plan, const std::string& site_id,
                            const std::string& prefix) {
    for (const auto& site : plan.sites()) {
      if (site.facility_id() != site_id) continue;
      for (const auto& route : site.routes()) {
        if (route.prefix() == prefix && route.next_hops_size() > 0) {
          return route.next_hops(0).link_id();
        }
      }
    }
    return "";
  }

  std::unique_ptr<LocalLab> lab_;
};

TEST_F(RestartTest, AgentsResumeAfterPathcompIsKilledAndNothingIsLost) {
  const uint64_t epoch = GetPlan()->plan().epoch();
  const std::string routerd_log = lab_->process("routerd/iad")->log_path();
  // What routerd logs from here on (plans during start-up may withdraw).
  const size_t log_start = ReadFile(routerd_log).size();
  auto log_since_kill = [&] { return ReadFile(routerd_log).substr(log_start); };
  lab_->Kill("pathcomp", SIGKILL);
  // The fiber is cut while no controller listens: the agents must hold the reports.
  ASSERT_TRUE(lab_->SetLinkState("iad-chi", "down").ok());
  ASSERT_TRUE(lab_->SetLinkState("chi-iad", "down").ok());
  ASSERT_TRUE(LocalLab::WaitFor(
      [&] { return log_since_kill().find("fail-static") != std::string::npos; }, seconds(10)));
  EXPECT_THAT(log_since_kill(), ::testing::Not(HasSubstr("would withdraw")));

  ASSERT_TRUE(lab_->Restart("pathcomp").ok());
  ASSERT_TRUE(LocalLab::WaitFor(
      [&] {
        auto plan = GetPlan();
        auto link = Link("iad-chi");
        auto reverse = Link("chi-iad");
        return plan && link && reverse && link->health().state() == v1::OPER_STATE_DOWN &&
               reverse->health().state() == v1::OPER_STATE_DOWN &&
               NextHopFromTo(plan->plan(), "iad", "10.3.0.0/16") == "iad-nyc" && Converged();
      },
      seconds(30)));
  EXPECT_GT(GetPlan()->plan().epoch(), epoch);
  // The iad agent resumed its session after the last report pathcomp had stored.
  const std::string pathcomp_log = ReadFile(lab_->process("pathcomp")->log_path());
  std::regex resumed(R"(msg="agent connected" agent=spiffe://geodesic/site/iad/agent incarnation=\d+ resume_after_seq=([1-9]\d*))");
  EXPECT_TRUE(std::regex_search(pathcomp_log, resumed)) << pathcomp_log;
  // And the routers of iad were moved (by local repair first), never emptied.
  EXPECT_THAT(log_since_kill(), HasSubstr("prefix=10.3.0.0/16 to=chi via=iad-nyc(w1) was=iad-chi(w1)"));
  EXPECT_THAT(log_since_kill(), HasSubstr("msg=\"local repair\" down_links=iad-chi"));
  // (Other prefixes may come and go with probe flaps on a loaded machine once
  // pathcomp is back; the cut facility's never may.)
  EXPECT_THAT(log_since_kill(), ::testing::Not(HasSubstr("would withdraw\" prefix=10.3.0.0/16")));
}

TEST_F(RestartTest, RouterdRestoresItsInstalledPlanAfterSigkill) {
  const uint64_t generation = GetPlan()->plan().generation();
  lab_->Kill("routerd/iad", SIGKILL);
  ASSERT_TRUE(lab_->Restart("routerd/iad").ok());
  const std::string log = lab_->process("routerd/iad")->log_path();
  ASSERT_TRUE(LocalLab::WaitFor(
      [&] {
        return ReadFile(log).find("msg=\"restored installed plan\" generation=" +
                                  std::to_string(generation)) != std::string::npos;
      },
      seconds(10)));
  // A new plan after the restart is installed by the restarted routerd.
  ASSERT_TRUE(lab_->SetLinkState("iad-nyc", "down").ok());
  ASSERT_TRUE(LocalLab::WaitFor(
      [&] {
        auto plan = GetPlan();
        return plan && plan->plan().generation() > generation && Converged();
      },
      seconds(30)));
}

}  // namespace
}  // namespace geodesic
