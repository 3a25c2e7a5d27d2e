// Agents stream measurements while pathcomp is SIGKILLed and restarted: the
// store's journal must show every agent's reports applied exactly once —
// per agent, the sequence numbers 1, 2, 3, ... with no gap and no repeat —
// and the model must end with the last measurement of every link.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

#include "sim/local_lab.h"

namespace geodesic {
namespace {

using sim::LocalLab;
using std::chrono::milliseconds;
using std::chrono::seconds;

class TelemetryExactlyOnceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::LabOptions options;
    options.source_dir = std::getenv("GEODESIC_SOURCE_DIR");
    options.binary_dir = std::getenv("GEODESIC_BINARY_DIR");
    options.work_dir = (std::filesystem::temp_directory_path() /
                        ("geodesic-exactly-once-" + std::to_string(::getpid())))
                           .string();
    std::filesystem::remove_all(options.work_dir);
    options.topology_path = options.source_dir + "/deploy/examples/backbone.yaml";
    options.agent_poll_interval_ms = 10;
    options.agent_report_interval_ms = 20;  // a report per agent every 20 ms while RTTs move
    auto lab = LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    ASSERT_TRUE(lab_->StartPathcomp().ok());
    for (const auto& facility : lab_->topology().facilities) ASSERT_TRUE(lab_->StartAgent(facility.id()).ok());
  }

  void TearDown() override {
    const std::string dir = lab_ ? lab_->work_dir() : "";
    lab_.reset();
    if (!HasFailure() && !dir.empty()) std::filesystem::remove_all(dir);
  }

  std::map<std::string, uint64_t> MeasuredRtts() {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(2));
    v1::ListLinksResponse response;
    std::map<std::string, uint64_t> rtts;
    if (!stub->ListLinks(&context, {}, &response).ok()) return rtts;
    for (const auto& link : response.links()) rtts[link.id()] = link.health().rtt_us();
    return rtts;
  }

  // Every journal entry's cause, oldest first.
  std::vector<std::string> JournalCauses() {
    std::vector<std::string> causes;
    auto stub = lab_->OperatorClient("admin");
    for (uint64_t from = 1;;) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + seconds(10));
      v1::ListJournalRequest request;
      request.set_from_seq(from);
      request.set_limit(10'000);
      v1::ListJournalResponse response;
      const grpc::Status status = stub->ListJournal(&context, request, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      if (!status.ok() || response.entries().empty()) break;
      for (const auto& entry : response.entries()) causes.push_back(entry.cause());
      from = response.entries().rbegin()->seq() + 1;
      if (from > response.last_seq()) break;
    }
    return causes;
  }

  std::unique_ptr<LocalLab> lab_;
};

TEST_F(TelemetryExactlyOnceTest, NoReportIsLostOrAppliedTwiceAcrossAControllerKill) {
  // Every link's RTT moves every few milliseconds, so every agent keeps
  // numbering reports, before, during and after the controller's absence.
  std::atomic<bool> driving{true};
  std::map<std::string, uint64_t> last_written;
  std::thread driver([&] {
    for (uint64_t tick = 1; driving; ++tick) {
      for (const auto& link : lab_->topology().links) {
        const uint64_t rtt = 1000 + (tick * 7919 + link.id().size() * 104729) % 50'000;
        EXPECT_TRUE(lab_->SetLinkHealth(link.id(), absl::StrCat("state: up, rtt_us: ", rtt)).ok());
        last_written[link.id()] = rtt;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
  });
  std::this_thread::sleep_for(seconds(1));
  lab_->Kill("pathcomp", SIGKILL);
  std::this_thread::sleep_for(seconds(1));  // the agents buffer meanwhile
  ASSERT_TRUE(lab_->Restart("pathcomp").ok());
  std::this_thread::sleep_for(seconds(1));
  driving = false;
  driver.join();

  // The model ends with the last measurement of every link.
  ASSERT_TRUE(LocalLab::WaitFor([&] { return MeasuredRtts() == last_written; }, seconds(30)))
      << "the model did not converge to the last measurements";

  // Exactly once, by sequence number, per agent.
  const std::regex telemetry(R"(telemetry from (\S+) seq (\d+))");
  std::map<std::string, std::vector<uint64_t>> seqs;
  for (const std::string& cause : JournalCauses()) {
    // One commit may hold the reports of several agents.
    for (std::sregex_iterator it(cause.begin(), cause.end(), telemetry), end; it != end; ++it) {
      seqs[(*it)[1]].push_back(std::stoull((*it)[2]));
    }
  }
  ASSERT_EQ(seqs.size(), lab_->topology().facilities.size());
  for (const auto& [agent, applied] : seqs) {
    ASSERT_GT(applied.size(), 20u) << agent << " reported too little for the test to mean anything";
    std::printf("%s: reports 1..%zu applied once each\n", agent.c_str(), applied.size());
    for (size_t i = 0; i < applied.size(); ++i) {
      ASSERT_EQ(applied[i], i + 1) << agent << ": report " << i + 1 << " was lost or applied twice";
    }
  }
  // The kill did happen between reports: pathcomp resumed every agent after what it had stored.
  std::ifstream log(lab_->process("pathcomp")->log_path());
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, ::testing::ContainsRegex("resume_after_seq=[1-9]"));
}

}  // namespace
}  // namespace geodesic
