// Stragglers end to end with the real daemons on loopback: a service posts a
// latency report to its facility's site agent, the agent relays it to
// pathcomp in its telemetry stream, and `tectl explain chain` and
// ListStragglers name that hop; a link slower than planned makes its hop the
// network straggler, measured by the links' probes. Bad reports are refused
// with 400 and change nothing; a report about a chain pathcomp does not have
// is left out without stopping the agent's stream.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "sim/http_get.h"
#include "sim/lab_client.h"
#include "sim/local_lab.h"
#include "sim/process.h"
#include "sim/wait_until.h"
#include "tests/support/lab_testing.h"
#include "tests/support/metrics_testing.h"
#include "tests/support/test_dirs.h"

namespace geodesic {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// rag-nyc (deploy/examples/backbone.yaml) calls retriever, reranker, llm-70b from nyc.
constexpr char kChain[] = "rag-nyc";

class StragglerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = std::make_unique<testing::TempDir>("straggler");
    auto lab = sim::LocalLab::Create(testing::LabOptionsFor(work_->path()));
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    ASSERT_TRUE(lab_->StartPathcomp().ok());
    for (const auto& facility : lab_->topology().facilities) ASSERT_TRUE(lab_->StartAgent(facility.id()).ok());
    const sim::LabClient client(*lab_);
    ASSERT_TRUE(client.WaitLinksIn(v1::OPER_STATE_UP, 30s).ok());
    auto converged = client.WaitConverged({.timeout = 30s, .at_routers = false});
    ASSERT_TRUE(converged.ok()) << converged.status();
  }
  void TearDown() override {
    if (HasFailure()) work_->keep();
  }

  absl::StatusOr<v1::ExplainChainResponse> Explain() {
    auto stub = lab_->OperatorClient("viewer");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::ExplainChainRequest request;
    request.set_workload_id(kChain);
    v1::ExplainChainResponse response;
    const grpc::Status status = stub->ExplainChain(&context, request, &response);
    if (!status.ok()) return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
    return response;
  }

  v1::ListStragglersResponse Stragglers() {
    auto stub = lab_->OperatorClient("viewer");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::ListStragglersResponse response;
    EXPECT_TRUE(stub->ListStragglers(&context, v1::ListStragglersRequest(), &response).ok());
    return response;
  }

  sim::RunResult Tectl(std::vector<std::string> args) {
    const tls::TlsFiles viewer = lab_->operator_tls("viewer");
    std::vector<std::string> argv = {testing::BinaryDir() + "/bin/tectl", "--server", lab_->pathcomp_address(),
                                     "--ca", viewer.ca_path, "--cert", viewer.cert_path, "--key", viewer.key_path};
    argv.insert(argv.end(), args.begin(), args.end());
    auto run = sim::RunCommand(argv);
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? *run : sim::RunResult{.exit_code = -1, .output = ""};
  }

  // Posts `body` to the agent of `facility`.
  sim::HttpAnswer Post(const std::string& facility, const std::string& body) {
    auto url = lab_->ServiceReportsUrl(facility);
    EXPECT_TRUE(url.ok()) << url.status();
    if (!url.ok()) return {};
    auto answer = sim::HttpPost(*url, body);
    EXPECT_TRUE(answer.ok()) << answer.status();
    return answer.ok() ? *answer : sim::HttpAnswer{};
  }

  static std::string Report(uint32_t hop, const std::string& service, uint64_t latency_us,
                            const std::string& workload = kChain) {
    return absl::StrCat(R"({"workload_id": ")", workload, R"(", "hop": )", hop, R"(, "service_id": ")", service,
                        R"(", "service_latency_us": )", latency_us, R"(, "calls": 40, "window_ms": 10000})");
  }

  std::unique_ptr<testing::TempDir> work_;
  std::unique_ptr<sim::LocalLab> lab_;
};

TEST_F(StragglerTest, AServiceReportAndASlowLinkEachNameTheirHop) {
  auto before = Explain();
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(before->chain().placed());
  ASSERT_EQ(before->chain().hops_size(), 3);
  EXPECT_FALSE(before->chain().has_straggler()) << before->DebugString();
  const v1::HopLatency reranker = before->chain().hops(1);
  EXPECT_FALSE(reranker.service_measured());

  // Bad reports: 400 with the reason, and nothing of the request reaches
  // pathcomp. The retriever's agent then relays a report about no chain
  // pathcomp has (it cannot know: pathcomp leaves it out) and a good one,
  // which arrives: its stream carried on, and the refused request's report
  // for the same hop never came.
  const v1::HopLatency retriever = before->chain().hops(0);
  const std::string retriever_at = retriever.replica_facility_id();
  sim::HttpAnswer refused = Post(retriever_at, "{not json");
  EXPECT_EQ(refused.status, 400u);
  EXPECT_THAT(refused.body, HasSubstr("not JSON"));
  refused = Post(retriever_at, absl::StrCat("[", Report(0, "retriever", 900'000), R"(, {"workload_id": "rag-nyc",
      "hop": 0, "service_id": "retriever", "service_latency_us": 20000000, "calls": 1, "window_ms": 1}])"));
  EXPECT_EQ(refused.status, 400u);
  EXPECT_THAT(refused.body, HasSubstr("report 1: "));
  EXPECT_THAT(refused.body, HasSubstr("service_latency_us must be at most"));
  EXPECT_EQ(Post(retriever_at, Report(0, "retriever", 1000, "no-such-chain")).status, 202u);
  EXPECT_EQ(Post(retriever_at, Report(0, "retriever", retriever.planned_service_time_us())).status, 202u);

  // The reranker takes 60 ms longer than planned: its hop is the straggler.
  const std::string facility = reranker.replica_facility_id();
  const uint64_t slow_us = reranker.planned_service_time_us() + 60'000;
  const sim::HttpAnswer accepted = Post(facility, Report(1, "reranker", slow_us));
  ASSERT_EQ(accepted.status, 202u) << accepted.body;
  EXPECT_EQ(accepted.body, "{\"queued\": 1}\n");
  v1::ExplainChainResponse explained;
  const absl::Status named = sim::WaitUntil("pathcomp to name the reranker's hop the straggler", 30s, [&] {
    auto now = Explain();
    if (!now.ok() || !now->chain().has_straggler() || !now->chain().hops(0).service_measured()) return false;
    explained = *now;
    return true;
  });
  ASSERT_TRUE(named.ok()) << named;
  const v1::Straggler& straggler = explained.chain().straggler();
  EXPECT_EQ(straggler.hop(), 1u);
  EXPECT_EQ(straggler.service_id(), "reranker");
  EXPECT_EQ(straggler.replica_facility_id(), facility);
  EXPECT_EQ(straggler.component(), v1::LATENCY_COMPONENT_SERVICE);
  EXPECT_EQ(straggler.deviation_us(), 60'000);
  EXPECT_EQ(explained.chain().hops(1).measured_service_latency_us(), slow_us);
  EXPECT_EQ(explained.chain().hops(1).report_calls(), 40u);
  EXPECT_EQ(explained.chain().hops(0).measured_service_latency_us(), retriever.planned_service_time_us());
  // pathcomp counted the report about no chain as dropped, and kept the others
  // (at least: an agent that reconnects sends its latest reports again).
  auto admin = lab_->AdminUrl("pathcomp");
  ASSERT_TRUE(admin.ok()) << admin.status();
  auto scraped = sim::HttpGet(*admin + "/metrics");
  ASSERT_TRUE(scraped.ok()) << scraped.status();
  auto counted = [&](const std::string& result) {
    return testing::SeriesValue(scraped->body, "geodesic_pathcomp_service_reports_total", {{"result", result}})
        .value_or(0);
  };
  EXPECT_GE(counted("dropped"), 1.0);
  EXPECT_GE(counted("kept"), 2.0);

  sim::RunResult run = Tectl({"explain", "chain", kChain});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("MEASURED_SVC_MS"));
  EXPECT_THAT(run.output,
              HasSubstr(absl::StrCat("straggler: hop 2 reranker@", facility, ", service +60.0 ms over plan")));
  const v1::ListStragglersResponse worst = Stragglers();
  ASSERT_FALSE(worst.stragglers().empty());
  EXPECT_EQ(worst.stragglers(0).workload_id(), kChain);
  EXPECT_EQ(worst.stragglers(0).hop(), 1u);
  EXPECT_TRUE(worst.stragglers(0).chain_straggler());
  run = Tectl({"get", "stragglers"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr(kChain));
  EXPECT_THAT(run.output, HasSubstr("+60.000"));

  // The first hop's first link measures 400 ms slower both ways than planned:
  // a measurement, not a state change, so the plan stays and its hop becomes
  // the straggler, measured by the links' probes.
  const v1::HopLatency& first = explained.chain().hops(0);
  ASSERT_EQ(first.network_source(), v1::NETWORK_SOURCE_LINK_PROBES) << first.DebugString();
  ASSERT_GT(first.network_link_ids_size(), 0);
  const std::string link = first.network_link_ids(0);
  ASSERT_TRUE(lab_->SetLinkHealth(link, "state: up, rtt_us: 800000").ok());
  const absl::Status network = sim::WaitUntil("the slow link's hop to become the straggler", 30s, [&] {
    auto now = Explain();
    if (!now.ok() || !now->chain().has_straggler()) return false;
    explained = *now;
    return now->chain().straggler().component() == v1::LATENCY_COMPONENT_NETWORK;
  });
  ASSERT_TRUE(network.ok()) << network << "\n" << explained.DebugString();
  const v1::Straggler& slow = explained.chain().straggler();
  EXPECT_EQ(slow.network_source(), v1::NETWORK_SOURCE_LINK_PROBES);
  EXPECT_THAT(explained.chain().hops(static_cast<int>(slow.hop())).network_link_ids(), ::testing::Contains(link));
  EXPECT_GT(slow.deviation_us(), 300'000);
  run = Tectl({"explain", "chain", kChain});
  EXPECT_THAT(run.output, HasSubstr("over plan (measured by link probes)")) << run.output;
}

}  // namespace
}  // namespace geodesic
