// Real agents probing each other's links on loopback, reporting to a real
// pathcomp: an agent that stops answering (SIGSTOP, a hung host) makes its
// neighbours report their links to it down within interval x multiplier
// plus a margin, and up again once it answers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "sim/local_lab.h"

namespace geodesic {
namespace {

using sim::LocalLab;
using std::chrono::milliseconds;
using std::chrono::seconds;

class ProbingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::LabOptions options;
    options.source_dir = std::getenv("GEODESIC_SOURCE_DIR");
    options.binary_dir = std::getenv("GEODESIC_BINARY_DIR");
    options.work_dir = (std::filesystem::temp_directory_path() / ("geodesic-probing-" + std::to_string(::getpid())))
                           .string();
    std::filesystem::remove_all(options.work_dir);
    options.topology_path = options.source_dir + "/deploy/examples/backbone.yaml";
    options.probe_interval_ms = 10;  // x3: a hard failure is seen in ~30 ms
    auto lab = LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    ASSERT_TRUE(lab_->StartPathcomp().ok());
    for (const auto& facility : lab_->topology().facilities) ASSERT_TRUE(lab_->StartAgent(facility.id()).ok());
    ASSERT_TRUE(lab_->StartRouterd("iad").ok());
  }

  void TearDown() override {
    if (lab_ && lab_->process("agent/chi")) lab_->process("agent/chi")->Signal(SIGCONT);
    const std::string dir = lab_ ? lab_->work_dir() : "";
    lab_.reset();
    if (!HasFailure() && !dir.empty()) std::filesystem::remove_all(dir);
  }

  std::map<std::string, v1::LinkHealth> Health() {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(2));
    v1::ListLinksResponse response;
    std::map<std::string, v1::LinkHealth> health;
    if (!stub->ListLinks(&context, {}, &response).ok()) return health;
    for (const auto& link : response.links()) health[link.id()] = link.health();
    return health;
  }

  std::unique_ptr<LocalLab> lab_;
};

TEST_F(ProbingTest, NeighboursSeeAHungAgentWithinTheDetectionTime) {
  ASSERT_TRUE(LocalLab::WaitFor(
      [&] {
        auto health = Health();
        return !health.empty() && std::all_of(health.begin(), health.end(), [](const auto& entry) {
          return entry.second.state() == v1::OPER_STATE_UP && entry.second.rtt_us() > 0;
        });
      },
      seconds(30)))
      << "every link probed up";
  EXPECT_LT(Health()["iad-chi"].rtt_us(), 20'000u);  // loopback

  const auto stopped = std::chrono::steady_clock::now();
  lab_->process("agent/chi")->Signal(SIGSTOP);
  ASSERT_TRUE(LocalLab::WaitFor([&] { return Health()["iad-chi"].state() == v1::OPER_STATE_DOWN; }, seconds(5)));
  const auto seen = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - stopped);
  std::printf("pathcomp saw iad-chi down %lld ms after chi's agent hung (probes: 10 ms x 3)\n",
              static_cast<long long>(seen.count()));
  // 30 ms to detect, then the report and this test's polling (every 20 ms).
  EXPECT_LT(seen, milliseconds(30 + 300));
  // Every neighbour of chi saw it.
  for (const std::string link : {"nyc-chi", "den-chi", "dfw-chi"}) {
    EXPECT_TRUE(LocalLab::WaitFor([&] { return Health()[link].state() == v1::OPER_STATE_DOWN; }, seconds(2))) << link;
  }
  EXPECT_EQ(Health()["iad-nyc"].state(), v1::OPER_STATE_UP);
  // iad's routerd heard it from its agent directly, not from a plan.
  std::ifstream routerd_log(lab_->process("routerd/iad")->log_path());
  const std::string log((std::istreambuf_iterator<char>(routerd_log)), std::istreambuf_iterator<char>());
  EXPECT_THAT(log, ::testing::HasSubstr(R"(msg="local link event" link=iad-chi state=OPER_STATE_DOWN)"));

  lab_->process("agent/chi")->Signal(SIGCONT);
  EXPECT_TRUE(LocalLab::WaitFor([&] { return Health()["iad-chi"].state() == v1::OPER_STATE_UP; }, seconds(10)));
}

}  // namespace
}  // namespace geodesic
