// The agent's service report endpoint: what a POST body may hold, how a bad
// one is refused (naming the report and field, queuing nothing), and the
// buffer that coalesces reports per (workload, hop) until they are relayed.
#include "site_agent/service_report_intake.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "site_agent/agent_config.h"
#include "tests/support/test_dirs.h"

namespace geodesic::site_agent {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000'000;

const char kOne[] =
    R"({"workload_id": "rag", "hop": 1, "service_id": "retriever", "service_latency_us": 4200,
        "network_rtt_us": 900, "calls": 25, "window_ms": 10000})";

TEST(ServiceReportIntakeTest, AcceptsOneReportAnArrayOrAReportsObject) {
  auto one = ParseServiceReports(kOne, kNow);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].workload_id(), "rag");
  EXPECT_EQ((*one)[0].hop(), 1u);
  EXPECT_EQ((*one)[0].service_latency_us(), 4200u);
  EXPECT_EQ((*one)[0].network_rtt_us(), 900u);
  EXPECT_EQ((*one)[0].calls(), 25u);
  EXPECT_EQ((*one)[0].received_at_unix_ms(), kNow);

  auto array = ParseServiceReports(std::string("[") + kOne + "," +
                                       R"({"workloadId": "rag", "hop": 0, "serviceId": "embedder",
                                           "serviceLatencyUs": "800", "calls": 1, "windowMs": 1000}])",
                                   kNow);
  ASSERT_TRUE(array.ok()) << array.status();
  ASSERT_EQ(array->size(), 2u);
  EXPECT_EQ((*array)[1].service_id(), "embedder");
  EXPECT_EQ((*array)[1].network_rtt_us(), 0u);  // not measured

  auto wrapped = ParseServiceReports(std::string(R"({"reports": [)") + kOne + "]}", kNow);
  ASSERT_TRUE(wrapped.ok()) << wrapped.status();
  EXPECT_EQ(wrapped->size(), 1u);
}

TEST(ServiceReportIntakeTest, RefusesABadRequestSayingWhichReportAndWhy) {
  struct Case {
    std::string body;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "not JSON"},
      {"{not json", "not JSON"},
      {"42", "expected a report object"},
      {"[]", "no reports"},
      {"[1]", "report 0: expected a JSON object"},
      {R"({"reports": [], "extra": 1})", "nothing else beside it"},
      {R"({"workload_id": "rag", "hop": 0, "service_id": "r", "service_latency_us": 1, "calls": 1, "window_ms": 1,
           "colour": "red"})",
       "colour"},
      {R"({"workload_id": "RAG", "hop": 0, "service_id": "r", "calls": 1, "window_ms": 1})", "workload_id must match"},
      {R"({"workload_id": "rag", "hop": -1, "service_id": "r", "calls": 1, "window_ms": 1})", "report 0"},
      {R"({"workload_id": "rag", "hop": 0, "service_id": "r", "service_latency_us": 10000001, "calls": 1,
           "window_ms": 1})",
       "service_latency_us must be at most"},
      {R"({"workload_id": "rag", "hop": 0, "service_id": "r", "network_rtt_us": 99999999, "calls": 1, "window_ms": 1})",
       "network_rtt_us must be at most"},
      {R"({"workload_id": "rag", "hop": 0, "service_id": "r", "window_ms": 1})", "calls must be within"},
      {R"({"workload_id": "rag", "hop": 0, "service_id": "r", "calls": 1})", "window_ms must be within"},
      {R"({"workload_id": "rag", "hop": 0, "service_id": "r", "calls": 1, "window_ms": 1, "received_at_unix_ms": 5})",
       "set by the agent"},
      {std::string("[") + kOne + R"(, {"workload_id": "rag", "hop": 0, "service_id": "r", "calls": 0, "window_ms": 1}])",
       "report 1: "},
  };
  for (const Case& c : cases) {
    auto parsed = ParseServiceReports(c.body, kNow);
    ASSERT_FALSE(parsed.ok()) << c.body;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(c.message)) << c.body;
  }
}

TEST(ServiceReportIntakeTest, TheHandlerAnswers400QueuingNothingOr202) {
  ServiceReportBuffer buffer(10);
  int woken = 0;
  const auto wake = [&] { ++woken; };
  daemon::HttpResponse refused = AcceptServiceReports(
      {.path = kServiceReportsPath, .body = std::string("[") + kOne + R"(, {"hop": 1}])"}, kNow, buffer, wake);
  EXPECT_EQ(refused.status, 400);
  EXPECT_THAT(refused.body, HasSubstr("report 1: "));
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_EQ(woken, 0);
  daemon::HttpResponse accepted = AcceptServiceReports({.path = kServiceReportsPath, .body = kOne}, kNow, buffer, wake);
  EXPECT_EQ(accepted.status, 202);
  EXPECT_EQ(accepted.body, "{\"queued\": 1}\n");
  EXPECT_EQ(buffer.size(), 1u);
  EXPECT_EQ(woken, 1);
}

v1::ServiceLatencyReport Report(const std::string& workload, uint32_t hop, int64_t at_unix_ms, uint64_t latency_us = 1) {
  v1::ServiceLatencyReport report;
  report.set_workload_id(workload);
  report.set_hop(hop);
  report.set_service_latency_us(latency_us);
  report.set_received_at_unix_ms(at_unix_ms);
  return report;
}

TEST(ServiceReportBufferTest, CoalescesPerWorkloadAndHopUntilTaken) {
  ServiceReportBuffer buffer(100);
  buffer.Add({Report("rag", 0, 1, 10), Report("rag", 1, 1, 20)});
  buffer.Add({Report("rag", 0, 2, 30)});
  auto pending = buffer.TakePending();
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].service_latency_us(), 30u);  // latest wins
  EXPECT_EQ(pending[1].service_latency_us(), 20u);
  EXPECT_TRUE(buffer.TakePending().empty());
  buffer.Add({Report("rag", 1, 3, 40)});
  ASSERT_EQ(buffer.TakePending().size(), 1u);
  EXPECT_EQ(buffer.Latest(3).size(), 2u);  // snapshots carry every (workload, hop)
}

TEST(ServiceReportBufferTest, IsBoundedAndSnapshotsLeaveOutOldReports) {
  ServiceReportBuffer buffer(2);
  buffer.Add({Report("a", 0, 100), Report("b", 0, 200)});
  buffer.Add({Report("c", 0, 300)});  // "a" was received longest ago
  EXPECT_EQ(buffer.size(), 2u);
  const auto pending = buffer.TakePending();
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].workload_id(), "b");
  EXPECT_EQ(pending[1].workload_id(), "c");
  const auto latest = buffer.Latest(200 + ServiceReportBuffer::kKeepMs + 1);
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].workload_id(), "c");
}

absl::StatusOr<AgentConfig> LoadWith(const std::string& service_reports) {
  const geodesic::testing::TempDir dir("service_reports_config");
  const std::string path = dir.Join("agent.yaml");
  std::ofstream(path) << "facility: iad\npathcomp: [{address: 127.0.0.1:7443}]\n"
                         "tls: {ca: ca.crt, cert: a.crt, key: a.key}\n"
                      << service_reports << "links: [{id: iad-chi}]\n";
  return LoadAgentConfig(path);
}

TEST(ServiceReportsConfigTest, IsOptionalLoopbackByDefaultAndChecked) {
  auto config = LoadWith("");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->service_reports.has_value());

  config = LoadWith("service_reports: {listen: \"127.0.0.1:0\", max_reports: 50}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(config->service_reports.has_value());
  EXPECT_EQ(config->service_reports->listen, "127.0.0.1:0");
  EXPECT_EQ(config->service_reports->max_reports, 50u);

  config = LoadWith("service_reports: {listen: \"0.0.0.0:7490\"}\n");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("service_reports.listen"));
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("allow_remote: true"));
  EXPECT_TRUE(LoadWith("service_reports: {listen: \"0.0.0.0:7490\", allow_remote: true}\n").ok());

  config = LoadWith("service_reports: {listen: nowhere, max_reports: 0, colour: red}\n");
  ASSERT_FALSE(config.ok());
  const std::string message(config.status().message());
  EXPECT_THAT(message, HasSubstr("service_reports.listen"));
  EXPECT_THAT(message, HasSubstr("service_reports.max_reports"));
  EXPECT_THAT(message, HasSubstr("colour"));
}

}  // namespace
}  // namespace geodesic::site_agent
