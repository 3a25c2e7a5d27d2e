// tectl's traffic-engineering commands, the real binary against a real
// pathcomp with site agents on loopback (the example backbone): what-if,
// drains with their pre-check, workloads, pins, metric overrides, the audit,
// explain, plan history and diff, events, the audit log, roles, completion,
// and bad input for each.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cli/options.h"
#include "geodesic/v1/operator.grpc.pb.h"
#include "sim/process.h"
#include "site_plan/chain_paths.h"
#include "tests/cli/tectl_testing.h"
#include "tests/support/lab_testing.h"

namespace geodesic::cli {
namespace {

using ::testing::Contains;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace ::geodesic::cli::tectl_testing;  // NOLINT: test helpers
namespace fs = std::filesystem;

class TectlTrafficTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    work_ = new TempDir("tectl-te");
    // Health from the agents' static source: no plan churn from RTT jitter.
    auto lab = sim::LocalLab::Create(testing::LabOptionsFor(work_->path()));
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = lab->release();
    ASSERT_TRUE(lab_->StartPathcomp().ok());
    for (const auto& facility : lab_->topology().facilities) ASSERT_TRUE(lab_->StartAgent(facility.id()).ok());
  }

  static void TearDownTestSuite() {
    delete lab_;
    lab_ = nullptr;
    if (failed_) work_->keep();  // with every daemon's log
    delete work_;
    work_ = nullptr;
  }

  // Every test starts without intents, with the backbone's workloads and its
  // links measured up.
  void SetUp() override {
    ASSERT_NE(lab_, nullptr);
    for (const v1::Intent& intent : Intents()) {
      auto stub = lab_->OperatorClient("admin");
      grpc::ClientContext context;
      v1::DeleteIntentRequest request;
      request.set_id(intent.id());
      v1::DeleteIntentResponse response;
      ASSERT_TRUE(stub->DeleteIntent(&context, request, &response).ok()) << intent.id();
    }
    const TectlRun reset = Online({"import", Backbone(), "--replace-workloads"});
    ASSERT_EQ(reset.exit_code, 0) << reset;
    const sim::LabClient client(*lab_);
    const absl::Status up = client.WaitLinksIn(v1::OPER_STATE_UP, std::chrono::seconds(30));
    ASSERT_TRUE(up.ok()) << up;
    // The import and the links coming up re-plan behind the debounce: tests
    // that compare generations start from the plan that reflects them (the
    // lab runs no routerd: the controller's answer is all there is).
    auto converged = client.WaitConverged({.timeout = std::chrono::seconds(30), .at_routers = false});
    ASSERT_TRUE(converged.ok()) << converged.status();
  }
  void TearDown() override { failed_ = failed_ || HasFailure(); }

  static TectlRun Online(std::vector<std::string> args, const std::string& operator_name = "admin") {
    const tls::TlsFiles tls = lab_->operator_tls(operator_name);
    std::vector<std::string> argv = {"--server", lab_->pathcomp_address(), "--ca", tls.ca_path,
                                     "--cert",   tls.cert_path,          "--key", tls.key_path};
    argv.insert(argv.end(), args.begin(), args.end());
    return Tectl(argv);
  }

  static std::vector<v1::Intent> Intents() {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    v1::ListIntentsResponse response;
    EXPECT_TRUE(stub->ListIntents(&context, {}, &response).ok());
    return {response.intents().begin(), response.intents().end()};
  }
  static std::vector<std::string> IntentIds() {
    std::vector<std::string> ids;
    for (const auto& intent : Intents()) ids.push_back(intent.id());
    return ids;
  }
  static int Links(v1::OperState state) {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    v1::ListLinksResponse links;
    if (!stub->ListLinks(&context, {}, &links).ok()) return -1;
    int count = 0;
    for (const auto& link : links.links()) count += link.health().state() == state;
    return count;
  }
  static v1::Plan Plan() {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    v1::GetPlanResponse response;
    EXPECT_TRUE(stub->GetPlan(&context, {}, &response).ok());
    return response.plan();
  }
  static v1::ListAuditLogResponse AuditLog() {
    auto stub = lab_->OperatorClient("viewer");
    grpc::ClientContext context;
    v1::ListAuditLogRequest request;
    request.set_limit(10'000);
    v1::ListAuditLogResponse response;
    EXPECT_TRUE(stub->ListAuditLog(&context, request, &response).ok());
    return response;
  }
  static std::vector<std::string> Ids(const google::protobuf::RepeatedPtrField<std::string>& ids) {
    return {ids.begin(), ids.end()};
  }

  static TempDir* work_;
  static sim::LocalLab* lab_;
  static bool failed_;
};

TempDir* TectlTrafficTest::work_ = nullptr;
sim::LocalLab* TectlTrafficTest::lab_ = nullptr;
bool TectlTrafficTest::failed_ = false;

TEST_F(TectlTrafficTest, WhatIfShowsTheImpactAndLeavesThePlanAlone) {
  const uint64_t generation = Plan().generation();
  // Dallas is the destination of the checkpoint flow, and one of three llm-70b sites.
  TectlRun run = Online({"whatif", "fail", "facility", "dfw", "-o", "json"}, "ops");
  ASSERT_EQ(run.exit_code, 0) << run;
  const auto impact = ParseJson<v1::Impact>(run.out);
  EXPECT_THAT(Ids(impact.cut_workload_ids()), Contains("ckpt-iad-dfw"));
  EXPECT_EQ(impact.plan_generation(), generation);
  EXPECT_GT(impact.routes_changed(), 0u);
  EXPECT_LT(impact.carried_after_gbps(), impact.carried_before_gbps());

  // A fiber conduit: both Ashburn northern links at once; the table form.
  run = Online({"whatif", "fail", "srlg", "conduit-iad-north", "link", "lon-ams"}, "ops");
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, StartsWith("what if srlg conduit-iad-north + link lon-ams failed, against plan generation"));
  EXPECT_THAT(run.out, HasSubstr("routes changed:"));
  run = Online({"whatif", "fail", "plane", "iad:1", "node", "chi-br1", "-o", "yaml"}, "ops");
  EXPECT_EQ(run.exit_code, 0) << run;

  // Nothing changed, and a viewer may not ask.
  EXPECT_EQ(Plan().generation(), generation);
  EXPECT_TRUE(Intents().empty());
  run = Online({"whatif", "fail", "link", "iad-nyc"}, "viewer");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, StartsWith("tectl: PERMISSION_DENIED: "));

  // Unknown ids and bad scopes: one line, exit 1; bad usage: exit 2.
  run = Online({"whatif", "fail", "link", "nowhere"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("unknown link nowhere"));
  run = Online({"whatif", "fail", "plane", "iad:7"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("planes 0..1"));
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"whatif", "fail", "link"}, {"whatif", "fail", "moon", "x"}, {"whatif", "break", "link", "a"},
           {"whatif", "fail", "link", "iad-nyc", "--max-utilization", "0"}}) {
    run = Online(bad, "ops");
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_THAT(run.err, StartsWith("tectl: "));
    EXPECT_THAT(run.err, HasSubstr("\nusage:\n  tectl whatif"));
  }
  EXPECT_EQ(Plan().generation(), generation);
}

TEST_F(TectlTrafficTest, DrainIsPreCheckedAndAStrandingDrainNeedsAnAdminsForce) {
  // A viewer cannot drain; the refusal is audited.
  const uint64_t audited = AuditLog().last_seq();
  TectlRun run = Online({"drain", "link", "iad-nyc"}, "viewer");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, StartsWith("tectl: PERMISSION_DENIED: "));
  EXPECT_TRUE(Intents().empty());

  // Draining Dallas would strand the checkpoint flow: refused, with the reason.
  run = Online({"drain", "facility", "dfw", "--reason", "power work"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.out, HasSubstr("pre-check of drain facility dfw"));
  EXPECT_THAT(run.err, HasSubstr("FAILED_PRECONDITION: drain refused by the pre-check: workload ckpt-iad-dfw would "
                                 "lose its last path"));
  EXPECT_TRUE(Intents().empty());
  // Only an admin may force it, and only with a reason.
  run = Online({"drain", "facility", "dfw", "--force", "--reason", "power work"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("PERMISSION_DENIED: force needs the admin role"));
  run = Online({"drain", "facility", "dfw", "--force"});
  EXPECT_EQ(run.exit_code, 2) << run;
  EXPECT_TRUE(Intents().empty());
  const uint64_t before = Plan().generation();
  run = Online({"drain", "facility", "dfw", "--force", "--reason", "power work"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("drained facility dfw (intent drain-facility-dfw, forced)"));
  EXPECT_THAT(IntentIds(), Contains("drain-facility-dfw"));
  EXPECT_GT(Plan().generation(), before);

  // Every attempt is in the audit log: who, what, result, and the plan produced.
  const v1::ListAuditLogResponse log = AuditLog();
  std::vector<std::string> lines;
  for (const auto& record : log.records()) {
    if (record.seq() <= audited) continue;
    lines.push_back(absl::StrCat(record.identity(), " ", record.role(), " ", record.action(), " ",
                                 record.ok() ? "ok" : record.result().substr(0, record.result().find(':'))));
  }
  EXPECT_THAT(lines, Contains("spiffe://geodesic/operator/viewer viewer add intent PERMISSION_DENIED"));
  EXPECT_THAT(lines, Contains("spiffe://geodesic/operator/ops operator add intent (dry run) FAILED_PRECONDITION"));
  EXPECT_THAT(lines, Contains("spiffe://geodesic/operator/ops operator add intent (forced, dry run) PERMISSION_DENIED"));
  EXPECT_THAT(lines, Contains("spiffe://geodesic/operator/admin admin add intent (forced) ok"));
  EXPECT_EQ(log.records(log.records_size() - 1).plan_generation(), Plan().generation());
  run = Online({"audit-log", "--limit", "3", "-o", "wide"}, "viewer");
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("add intent (forced)"));
  EXPECT_THAT(run.out, HasSubstr("power work"));

  run = Online({"undrain", "facility", "dfw"}, "ops");
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_TRUE(Intents().empty());
}

TEST_F(TectlTrafficTest, DryRunAndTheUtilizationLimit) {
  const uint64_t generation = Plan().generation();
  TectlRun run = Online({"drain", "link", "iad-nyc", "--dry-run"}, "ops");
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("dry run: nothing changed"));
  EXPECT_TRUE(Intents().empty());
  EXPECT_EQ(Plan().generation(), generation);

  // The checkpoint flow (200 of iad-dfw's 800 Gbps) has to go somewhere: at a
  // 5% limit every link it moves to is too full.
  run = Online({"drain", "link", "iad-dfw", "--max-utilization", "0.05", "-o", "json"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  const auto impact = ParseJson<v1::Impact>(run.out);
  EXPECT_GT(impact.links_over_limit_size(), 0);
  EXPECT_THAT(run.err, HasSubstr("would run at"));
  EXPECT_TRUE(Intents().empty());

  run = Online({"drain", "link", "iad-nyc", "--reason", "fiber work"}, "ops");
  ASSERT_EQ(run.exit_code, 0) << run;
  run = Online({"get", "links", "--state", "drained"}, "viewer");
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("iad-nyc"));
  EXPECT_EQ(LineCount(run.out), 2u) << run;  // header and iad-nyc
  // A second drain of the same link is refused; undrain twice: the second finds nothing.
  run = Online({"drain", "link", "iad-nyc"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("ALREADY_EXISTS"));
  EXPECT_EQ(Online({"undrain", "link", "iad-nyc"}, "ops").exit_code, 0);
  run = Online({"undrain", "link", "iad-nyc"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("NOT_FOUND"));

  // A plane of a fabric drains too.
  run = Online({"drain", "plane", "sjc:3", "--reason", "plane swap"}, "ops");
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(IntentIds(), Contains("drain-plane-sjc-3"));
  run = Online({"drain", "plane", "sjc:9"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("there is no plane 9"));
}

TEST_F(TectlTrafficTest, WorkloadsFromFlagsAndFiles) {
  TectlRun run = Online({"workload", "add", "sync-chi-sjc", "--src", "chi", "--to", "10.6.0.0/16", "--gbps", "50"}, "ops");
  ASSERT_EQ(run.exit_code, 0) << run;
  run = Online({"workload", "add", "agent-lon", "--origin", "lon", "--services", "retriever,llm-70b",
                "--budget-ms", "80"}, "ops");
  ASSERT_EQ(run.exit_code, 0) << run;
  run = Online({"workload", "add", "acme-sync", "--src", "chi", "--to", "10.6.0.0/16", "--gbps", "5",
                "--tenant", "acme"}, "ops");
  ASSERT_EQ(run.exit_code, 0) << run;
  run = Online({"workload", "list"}, "viewer");
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("sync-chi-sjc"));
  EXPECT_THAT(run.out, HasSubstr("agent-lon"));
  EXPECT_THAT(run.out, HasSubstr("TENANT"));
  EXPECT_THAT(run.out, ContainsRegex("acme-sync .* acme"));
  run = Online({"describe", "workload", "acme-sync"}, "viewer");
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("tenant: acme"));

  TempDir scratch{"tectl"};
  const std::string file = scratch.path() + "/workloads.yaml";
  std::ofstream(file) << "workloads:\n"
                         "  - {id: w-one, kind: elephant, src: den, dst_prefix: 10.2.0.0/16, demand_gbps: 10}\n"
                         "  - {id: w-two, kind: chain, origin: sjc, services: [reranker], latency_budget_us: 90000,\n"
                         "     tenant: beta}\n";
  run = Online({"workload", "add", "--file", file}, "ops");
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("added 2 workloads"));
  run = Online({"workload", "list", "-o", "json"}, "viewer");
  EXPECT_THAT(run.out, HasSubstr("\"tenant\": \"beta\""));
  // The same file again: its ids exist; a file naming an unknown service: its line.
  run = Online({"workload", "add", "--file", file}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("workload w-one already exists"));
  std::ofstream(file) << "workloads:\n"
                         "  - {id: w-three, kind: elephant, src: den, dst_prefix: 10.2.0.0/16, demand_gbps: 10}\n"
                         "  - {id: w-four, kind: chain, origin: sjc, services: [oracle], latency_budget_us: 9}\n";
  run = Online({"workload", "add", "--file", file}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("workloads.yaml:3:"));
  EXPECT_THAT(run.err, HasSubstr("unknown service oracle"));
  run = Online({"workload", "list", "-o", "json"}, "viewer");
  EXPECT_THAT(run.out, Not(HasSubstr("w-three")));  // nothing of a bad file is sent

  // Unknown facility, removal, and a viewer.
  run = Online({"workload", "add", "bad", "--src", "mars", "--to", "10.6.0.0/16", "--gbps", "5"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_EQ(Online({"workload", "remove", "w-one"}, "ops").exit_code, 0);
  run = Online({"workload", "remove", "w-two"}, "viewer");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, StartsWith("tectl: PERMISSION_DENIED"));
  run = Online({"workload", "remove", "w-one"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("unknown workload w-one"));
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"workload", "add", "x", "--src", "chi", "--gbps", "5"},
           {"workload", "add", "x", "--src", "chi", "--to", "10.6.0.0/16", "--gbps", "-1"},
           {"workload", "add", "x", "--origin", "lon", "--services", "a,,b", "--budget-ms", "5"},
           {"workload", "add", "x", "--src", "chi", "--origin", "lon"},
           {"workload", "add", "--file", file, "--gbps", "1"},
           {"workload", "remove"},
           {"workload", "frob"}}) {
    run = Online(bad, "ops");
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_THAT(run.err, HasSubstr("\nusage:\n  tectl workload"));
  }
}

TEST_F(TectlTrafficTest, PinsExplainAndTheAudit) {
  // rag-nyc calls retriever (iad, chi, ams), reranker (iad, sjc), llm-70b (dfw, sjc, lon).
  TectlRun run = Online({"explain", "chain", "rag-nyc"}, "viewer");
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, StartsWith("chain rag-nyc, plan generation "));
  EXPECT_THAT(run.out, HasSubstr("slowest hop: "));
  EXPECT_THAT(run.out, HasSubstr("IF THIS FAILS"));

  run = Online({"pin", "rag-nyc", "--path", "ams,sjc,lon", "--reason", "eu data"}, "ops");
  ASSERT_EQ(run.exit_code, 0) << run;
  run = Online({"explain", "chain", "rag-nyc", "-o", "json"}, "viewer");
  ASSERT_EQ(run.exit_code, 0) << run;
  const v1::ChainPlan chain = ParseJson<v1::ExplainChainResponse>(run.out).plan();
  ASSERT_EQ(chain.primary().hops_size(), 3);
  EXPECT_EQ(chain.primary().hops(0).replica_facility_id(), "ams");
  EXPECT_EQ(chain.primary().hops(1).replica_facility_id(), "sjc");
  EXPECT_EQ(chain.primary().hops(2).replica_facility_id(), "lon");
  // The pin makes each pinned replica a single-facility dependency: audit says so, exit 3.
  run = Online({"audit"}, "viewer");
  EXPECT_EQ(run.exit_code, 3) << run;
  EXPECT_THAT(run.out, HasSubstr("service llm-70b is pinned to lon"));
  // A pinned workload cannot be removed; an elephant flow cannot be pinned.
  run = Online({"workload", "remove", "rag-nyc"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("unpin it first"));
  run = Online({"pin", "ckpt-iad-dfw", "--facilities", "iad,dfw"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("only agent chains can be pinned"));
  run = Online({"pin", "rag-nyc", "--path", "ams,sjc"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;  // already pinned
  EXPECT_EQ(Online({"unpin", "rag-nyc"}, "ops").exit_code, 0);
  run = Online({"pin", "rag-nyc", "--path", "nyc,sjc,lon"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("has no replica in nyc"));
  // Within a facility set, replicas and transit stay inside it.
  run = Online({"pin", "rag-nyc", "--facilities", "nyc,iad,dfw"}, "ops");
  ASSERT_EQ(run.exit_code, 0) << run;
  run = Online({"explain", "chain", "rag-nyc", "-o", "json"}, "viewer");
  const v1::ChainPlan kept = ParseJson<v1::ExplainChainResponse>(run.out).plan();
  ASSERT_TRUE(kept.primary().placed()) << run;
  for (const auto& hop : kept.primary().hops()) {
    for (const auto& facility : site_plan::ChainPathIds(kept, hop.path_there())) {
      EXPECT_THAT(facility, ::testing::AnyOf("nyc", "iad", "dfw"));
    }
  }
  EXPECT_EQ(Online({"unpin", "rag-nyc"}, "ops").exit_code, 0);

  // The audit agrees with the plan.
  run = Online({"audit", "-o", "json"}, "viewer");
  EXPECT_EQ(run.exit_code, Plan().single_facility_dependencies_size() == 0 ? 0 : 3) << run;
  run = Online({"explain", "chain", "ckpt-iad-dfw"}, "viewer");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("no agent chain ckpt-iad-dfw"));
}

TEST_F(TectlTrafficTest, MetricOverridesAreForAdminsAndExpire) {
  TectlRun run = Online({"override", "nyc-chi", "--metric", "500"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("PERMISSION_DENIED: metric overrides need the admin role"));
  run = Online({"override", "nyc-chi", "--metric", "500", "--for", "2s", "--reason", "test"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(IntentIds(), Contains("override-nyc-chi"));
  // The expiry is audited after the intent is gone: wait for the record, which says both.
  const absl::Status expired_in_time =
      sim::WaitUntil("the 2 s override to expire and its expiry to be audited", std::chrono::seconds(15), [] {
        const v1::ListAuditLogResponse log = AuditLog();
        for (const auto& record : log.records()) {
          if (record.action() == "expire intent" && record.arguments().find("override-nyc-chi") != std::string::npos) {
            return true;
          }
        }
        return false;
      });
  ASSERT_TRUE(expired_in_time.ok()) << expired_in_time;
  EXPECT_THAT(Intents(), ::testing::IsEmpty());
  run = Online({"override", "nyc-chi", "--metric", "500"});
  ASSERT_EQ(run.exit_code, 0) << run;
  run = Online({"override", "nyc-chi", "--clear"}, "ops");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_EQ(Online({"override", "nyc-chi", "--clear"}).exit_code, 0);
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"override", "nyc-chi"}, {"override", "nyc-chi", "--metric", "0"},
           {"override", "nyc-chi", "--metric", "5", "--for", "1y"}, {"override", "nyc-chi", "--clear", "--metric", "5"}}) {
    run = Online(bad);
    EXPECT_EQ(run.exit_code, 2) << run;
  }
  run = Online({"override", "no-such-link", "--metric", "5"});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("unknown link no-such-link"));
}

TEST_F(TectlTrafficTest, PlanHistoryDiffAndEvents) {
  // Watch while a drain happens: its intent and its plan arrive. The drain
  // starts once the watch said it is subscribed (its first line).
  TempDir scratch{"tectl"};
  const std::string watch_out = scratch.path() + "/watch.out";
  const tls::TlsFiles viewer = lab_->operator_tls("viewer");
  auto watcher = sim::ChildProcess::Spawn(
      {BinaryDir() + "/bin/tectl", "--server", lab_->pathcomp_address(), "--ca", viewer.ca_path, "--cert",
       viewer.cert_path, "--key", viewer.key_path, "events", "watch", "--count", "2", "-o", "json"},
      watch_out);
  ASSERT_TRUE(watcher.ok()) << watcher.status();
  const absl::Status subscribed = sim::WaitUntil("tectl events watch to print that it subscribed",
                                                 std::chrono::seconds(30), [&] {
                                                   return ReadFile(watch_out).find("\"subscribed\"") != std::string::npos;
                                                 });
  ASSERT_TRUE(subscribed.ok()) << subscribed << "\n" << ReadFile(watch_out);
  const uint64_t before = Plan().generation();
  TectlRun run = Online({"drain", "link", "chi-den", "--reason", "maintenance"}, "ops");
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ((*watcher)->Wait(30'000), std::optional<int>(0)) << ReadFile(watch_out);
  const std::string watched = ReadFile(watch_out);
  EXPECT_THAT(watched, StartsWith("{\"at_unix_ms\""));
  EXPECT_LT(watched.find("\"subscribed\""), watched.find("drain-link-chi-den")) << watched;
  EXPECT_THAT(watched, HasSubstr("drain-link-chi-den"));
  const uint64_t after = Plan().generation();
  ASSERT_GT(after, before);

  run = Online({"plan", "history", "--limit", "5"}, "viewer");
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("intent drain-link-chi-den by ops"));
  EXPECT_THAT(run.out, HasSubstr("FAILURE_SAFE"));  // "-": the lab's classes are not protected
  run = Online({"plan", "diff", std::to_string(before), std::to_string(after)}, "viewer");
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, StartsWith(absl::StrCat("plan ", before, " -> ", after, ": ")));
  EXPECT_THAT(run.out, HasSubstr("chi-den"));  // routes that used it changed
  run = Online({"plan", "diff", std::to_string(before), std::to_string(after), "-o", "yaml"}, "viewer");
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("routes_changed:"));
  run = Online({"plan", "diff", "1", "999999"}, "viewer");
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("not in the history"));
  run = Online({"plan", "diff", "1"}, "viewer");
  EXPECT_EQ(run.exit_code, 2) << run;
  run = Online({"get", "plan", "-o", "json"}, "viewer");
  EXPECT_EQ(run.exit_code, 0) << run;
}

TEST_F(TectlTrafficTest, HelpAndCompletion) {
  for (const std::string& command : CommandNames()) {
    const TectlRun run = Tectl({command, "--help"});
    EXPECT_EQ(run.exit_code, 0) << command << run;
    EXPECT_THAT(run.out, HasSubstr(absl::StrCat("tectl ", command))) << run;
  }
  TectlRun run = Tectl({"completion", "bash"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("complete -F _tectl tectl"));
  TempDir scratch{"tectl"};
  std::ofstream(scratch.path() + "/tectl.bash") << run.out;
  auto syntax = sim::RunCommand({"/bin/bash", "-n", scratch.path() + "/tectl.bash"});
  ASSERT_TRUE(syntax.ok()) << syntax.status();
  EXPECT_EQ(syntax->exit_code, 0) << syntax->output;
  run = Tectl({"completion", "zsh"});
  EXPECT_EQ(run.exit_code, 2) << run;
}

}  // namespace
}  // namespace geodesic::cli
