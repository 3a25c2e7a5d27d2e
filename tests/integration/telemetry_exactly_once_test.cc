// Agents stream measurements while pathcomp is SIGKILLed and restarted: the
// store's journal must show every agent's reports applied exactly once —
// per agent, the sequence numbers 1, 2, 3, ... with no gap and no repeat —
// and the model must end with the last measurement of every link.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <regex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tests/support/lab_testing.h"

namespace geodesic {
namespace {

using sim::LocalLab;
using sim::WaitUntil;
using std::chrono::milliseconds;
using std::chrono::seconds;

class TelemetryExactlyOnceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // No probes: the test drives every link's RTT through the health files.
    sim::LabOptions options = testing::LabOptionsFor(work_.path());
    options.agent_poll_interval_ms = 10;
    options.agent_report_interval_ms = 20;  // a report per agent every 20 ms while RTTs move
    auto lab = LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    ASSERT_TRUE(lab_->StartPathcomp().ok());
    for (const auto& facility : lab_->topology().facilities) ASSERT_TRUE(lab_->StartAgent(facility.id()).ok());
  }

  void TearDown() override {
    lab_.reset();
    if (HasFailure()) work_.keep();
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

  // Per agent, the sequence numbers of its reports the journal shows applied, in order.
  std::map<std::string, std::vector<uint64_t>> AppliedSeqs() {
    static const std::regex telemetry(R"(telemetry from (\S+) seq (\d+))");
    std::map<std::string, std::vector<uint64_t>> seqs;
    for (const std::string& cause : JournalCauses()) {
      // One commit may hold the reports of several agents.
      for (std::sregex_iterator it(cause.begin(), cause.end(), telemetry), end; it != end; ++it) {
        seqs[(*it)[1]].push_back(std::stoull((*it)[2]));
      }
    }
    return seqs;
  }

  // Per agent, the highest sequence number applied; waits until every agent
  // has at least `more_than` of `floor` (every agent's 0 when empty) applied.
  std::map<std::string, uint64_t> WaitForReportsBeyond(const std::map<std::string, uint64_t>& floor,
                                                       uint64_t more_than, const std::string& what) {
    std::map<std::string, uint64_t> highest;
    const absl::Status waited = WaitUntil(what, seconds(30), [&] {
      highest.clear();
      for (const auto& [agent, applied] : AppliedSeqs()) {
        if (!applied.empty()) highest[agent] = *std::max_element(applied.begin(), applied.end());
      }
      if (highest.size() != lab_->topology().facilities.size()) return false;
      return std::all_of(highest.begin(), highest.end(), [&](const auto& entry) {
        auto it = floor.find(entry.first);
        return entry.second > (it == floor.end() ? 0 : it->second) + more_than;
      });
    }, milliseconds(200));
    EXPECT_EQ(waited, absl::OkStatus());
    return highest;
  }

  testing::TempDir work_{"exactly-once"};
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
      std::this_thread::sleep_for(milliseconds(5));  // the pace of the measurements is the test's input
    }
  });
  // Joined however the test ends (an ASSERT returns early).
  struct Join {
    std::atomic<bool>& flag;
    std::thread& thread;
    ~Join() {
      flag = false;
      if (thread.joinable()) thread.join();
    }
  } join{driving, driver};

  // Every agent has reports applied before the controller dies...
  const std::map<std::string, uint64_t> before_kill =
      WaitForReportsBeyond({}, 5, "every agent's reports applied before the kill");
  lab_->Kill("pathcomp", SIGKILL);
  std::this_thread::sleep_for(seconds(1));  // the thing tested: the controller stays away while agents report
  ASSERT_TRUE(lab_->Restart("pathcomp").ok());
  // ... and more applied after it came back than it had when it died (the
  // buffered ones), then reports made after the restart.
  const std::map<std::string, uint64_t> resumed =
      WaitForReportsBeyond(before_kill, 0, "every agent's reports applied after the restart");
  WaitForReportsBeyond(resumed, 5, "every agent's new reports applied after the restart");
  // Enough reports for the check below to mean something. (Measurements a
  // kill lost were acknowledged but not stored: the agent's snapshot after
  // the restart takes their numbers again, so the count is not what was sent.)
  std::map<std::string, uint64_t> enough;
  for (const auto& [agent, highest] : resumed) enough[agent] = 20;
  WaitForReportsBeyond(enough, 0, "every agent past 20 reports applied");
  driving = false;
  driver.join();

  // The model ends with the last measurement of every link.
  ASSERT_EQ(WaitUntil("the model to hold the last measurement of every link", seconds(30),
                      [&] { return MeasuredRtts() == last_written; }),
            absl::OkStatus());

  // Exactly once, by sequence number, per agent.
  const std::map<std::string, std::vector<uint64_t>> seqs = AppliedSeqs();
  ASSERT_EQ(seqs.size(), lab_->topology().facilities.size());
  for (const auto& [agent, applied] : seqs) {
    ASSERT_GT(applied.size(), 20u) << agent << " reported too little for the test to mean anything";
    std::printf("%s: reports 1..%zu applied once each\n", agent.c_str(), applied.size());
    for (size_t i = 0; i < applied.size(); ++i) {
      ASSERT_EQ(applied[i], i + 1) << agent << ": report " << i + 1 << " was lost or applied twice";
    }
  }
  // The kill did happen between reports: every agent had reports applied
  // before it and after it, so with 1, 2, 3, ... unbroken above, pathcomp
  // resumed every agent right after what it had stored, not from the start.
  for (const auto& [agent, highest] : before_kill) {
    ASSERT_TRUE(seqs.contains(agent)) << agent;
    EXPECT_GT(seqs.at(agent).size(), highest) << agent << ": nothing applied after the restart";
  }
}

}  // namespace
}  // namespace geodesic
