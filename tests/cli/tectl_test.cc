// The real tectl binary against a real pathcomp on loopback (mTLS with the
// lab's PKI, an admin and a viewer operator; the site agents measure the
// links): import in every way it can go wrong, then get, describe and journal
// in every output format, online and from the running pathcomp's store.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "geodesic/v1/operator.grpc.pb.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/cli/tectl_testing.h"
#include "tests/support/lab_testing.h"
#include "yaml-cpp/yaml.h"

namespace geodesic::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace ::geodesic::cli::tectl_testing;  // NOLINT: test helpers
namespace fs = std::filesystem;

class TectlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    work_ = new TempDir("tectl");
    // The agents report their links up (configured, not probed), so the
    // plan has routes to show.
    auto lab = sim::LocalLab::Create(testing::LabOptionsFor(work_->path()));
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = lab->release();
    client_ = new sim::LabClient(*lab_);
    ASSERT_TRUE(lab_->StartPathcomp().ok());
    for (const auto& facility : lab_->topology().facilities) {
      ASSERT_TRUE(lab_->StartAgent(facility.id()).ok());
    }
  }

  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
    delete lab_;
    lab_ = nullptr;
    if (failed_) work_->keep();  // with every daemon's log
    delete work_;
    work_ = nullptr;
  }

  void SetUp() override { ASSERT_NE(lab_, nullptr); }
  void TearDown() override { failed_ = failed_ || HasFailure(); }

  // tectl against the lab's pathcomp as the named operator.
  static TectlRun Online(std::vector<std::string> args, const std::string& operator_name = "admin") {
    const tls::TlsFiles tls = lab_->operator_tls(operator_name);
    std::vector<std::string> argv = {
        "--server",  lab_->pathcomp_address(), "--ca", tls.ca_path, "--cert", tls.cert_path, "--key",
        tls.key_path};
    argv.insert(argv.end(), args.begin(), args.end());
    return Tectl(argv);
  }

  // The journal after `seq` (all of it for 0), asked over gRPC, not through tectl.
  static v1::ListJournalResponse JournalAfter(uint64_t seq) {
    auto stub = lab_->OperatorClient("admin");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListJournalRequest request;
    request.set_from_seq(seq + 1);
    request.set_limit(10'000);
    v1::ListJournalResponse response;
    const grpc::Status status = stub->ListJournal(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }
  static uint64_t LastSeq() { return JournalAfter(UINT64_MAX - 1).last_seq(); }
  // How many imports were journaled after `seq`. (Agents' reports and plans
  // are journaled too, at any time: a refused import shows as no import.)
  static int ImportsAfter(uint64_t seq) {
    int imports = 0;
    const v1::ListJournalResponse journal = JournalAfter(seq);
    for (const auto& entry : journal.entries()) imports += entry.cause().rfind("import of ", 0) == 0;
    return imports;
  }

  // Every test starts from the example backbone, without intents, its links
  // reported up. An import that re-adds links resets their facilities' agent
  // sessions; the agents then start over with a snapshot, which this waits for.
  static void ResetModel() {
    (void)Online({"undrain", "link", "iad-nyc"});
    const TectlRun run = Online({"import", Backbone(), "--replace-workloads"});
    ASSERT_EQ(run.exit_code, 0) << run;
    const absl::Status up = client_->WaitLinksIn(v1::OPER_STATE_UP, std::chrono::seconds(20));
    ASSERT_TRUE(up.ok()) << up << " (did the agents resend their snapshots?)";
  }

  // The seq import's table names ("journal seq N, ...").
  static uint64_t ImportedSeq(const std::string& out) {
    const size_t at = out.find("journal seq ");
    EXPECT_NE(at, std::string::npos) << out;
    return at == std::string::npos ? 0 : std::stoull(out.substr(at + 12));
  }

  static std::string StateDir() { return lab_->work_dir() + "/state/pathcomp"; }

  static TempDir* work_;
  static sim::LocalLab* lab_;
  static sim::LabClient* client_;
  static bool failed_;
};

TempDir* TectlTest::work_ = nullptr;
sim::LocalLab* TectlTest::lab_ = nullptr;
sim::LabClient* TectlTest::client_ = nullptr;
bool TectlTest::failed_ = false;

TEST_F(TectlTest, ImportsAbileneOnlineAndShowsIt) {
  ResetModel();
  const std::string graph = RepetitaDir() + "/Abilene.graph";
  const RepetitaCounts abilene = CountRepetita("Abilene");
  const uint64_t before = LastSeq();

  // The backbone's workloads name facilities Abilene lacks: refused, nothing changes.
  TectlRun refused = Online({"import", graph});
  EXPECT_EQ(refused.exit_code, 1) << refused;
  EXPECT_THAT(refused.err, StartsWith("tectl: FAILED_PRECONDITION: "));
  EXPECT_EQ(ImportsAfter(before), 0);

  // A dry run counts without changing anything.
  TectlRun dry = Online({"import", graph, "--replace-workloads", "--dry-run", "-o", "json"});
  ASSERT_EQ(dry.exit_code, 0) << dry;
  const auto counted = ParseJson<v1::ImportTopologyResponse>(dry.out);
  EXPECT_EQ(counted.journal_seq(), 0u);
  ASSERT_FALSE(counted.counts().empty());
  EXPECT_EQ(counted.counts(0).kind(), "facility");
  EXPECT_EQ(counted.counts(0).added() + counted.counts(0).changed(), static_cast<uint32_t>(abilene.nodes));
  EXPECT_EQ(ImportsAfter(before), 0);

  TectlRun imported = Online({"import", graph, "--replace-workloads"});
  ASSERT_EQ(imported.exit_code, 0) << imported;
  EXPECT_THAT(imported.out, StartsWith("KIND "));
  const std::vector<int> facilities = ImportRow(imported.out, "facility");
  EXPECT_EQ(facilities[0] + facilities[1], abilene.nodes);
  EXPECT_EQ(facilities[2], 8);  // the backbone's facilities
  const std::vector<int> links = ImportRow(imported.out, "link");
  EXPECT_EQ(links[0] + links[1], abilene.edges);
  const std::vector<int> workloads = ImportRow(imported.out, "workload");
  EXPECT_EQ(workloads[0], abilene.demands_with_traffic);
  EXPECT_EQ(workloads[2], 3);  // the backbone's workloads, replaced
  const uint64_t seq = ImportedSeq(imported.out);
  EXPECT_GT(seq, before);
  EXPECT_EQ(ImportsAfter(before), 1);
  EXPECT_THAT(imported.out, HasSubstr(absl::StrCat("journal seq ", seq, ", plan generation ")));

  // What the model now holds, in JSON that parses as the API's responses.
  TectlRun got = Online({"get", "links", "-o", "json"});
  ASSERT_EQ(got.exit_code, 0) << got;
  EXPECT_EQ(ParseJson<v1::ListLinksResponse>(got.out).links_size(), abilene.edges);
  got = Online({"get", "facilities", "-o", "json"});
  ASSERT_EQ(got.exit_code, 0) << got;
  EXPECT_EQ(ParseJson<v1::ListFacilitiesResponse>(got.out).facilities_size(), abilene.nodes);
  got = Online({"get", "workloads", "-o", "json"});
  ASSERT_EQ(got.exit_code, 0) << got;
  EXPECT_EQ(ParseJson<v1::ListWorkloadsResponse>(got.out).workloads_size(), abilene.demands_with_traffic);
  got = Online({"get", "links"});
  ASSERT_EQ(got.exit_code, 0) << got;
  EXPECT_EQ(LineCount(got.out), static_cast<size_t>(abilene.edges) + 1);  // a header, a row per link

  // The journal names the file and the operator.
  const std::string cause =
      absl::StrCat("import of ", Absolute(graph), " by spiffe://geodesic/operator/admin");
  TectlRun journal = Online({"journal", "--from", std::to_string(seq), "--limit", "1", "-o", "json"});
  ASSERT_EQ(journal.exit_code, 0) << journal;
  const auto entries = ParseJson<v1::ListJournalResponse>(journal.out);
  ASSERT_EQ(entries.entries_size(), 1);
  EXPECT_EQ(entries.entries(0).seq(), seq);
  EXPECT_EQ(entries.entries(0).cause(), cause);
  journal = Online({"journal", "--from", std::to_string(seq), "--limit", "1"});
  ASSERT_EQ(journal.exit_code, 0) << journal;
  EXPECT_THAT(journal.out, StartsWith("SEQ "));
  EXPECT_THAT(journal.out, HasSubstr(cause));
  EXPECT_THAT(journal.out, HasSubstr(" changes: "));  // many changes are counted, not listed
  journal = Online({"journal"});                      // the newest 100, the import among them
  ASSERT_EQ(journal.exit_code, 0) << journal;
  EXPECT_THAT(journal.out, HasSubstr(cause));

  ResetModel();
}

TEST_F(TectlTest, GetAndDescribeEveryKindInEveryFormat) {
  ResetModel();
  TectlRun drained = Online({"drain", "link", "iad-nyc", "--reason", "fiber work"});
  ASSERT_EQ(drained.exit_code, 0) << drained;
  // The drain is in the model once answered; wait for the plan made from it
  // (no routerd runs here: the controller's answer alone).
  auto drained_model = client_->Plan();
  ASSERT_TRUE(drained_model.ok()) << drained_model.status();
  auto converged = client_->WaitConverged(
      {.timeout = std::chrono::seconds(60), .min_model_revision = drained_model->model_revision(), .at_routers = false});
  ASSERT_TRUE(converged.ok()) << converged.status();
  const TectlRun plan = Online({"get", "plan", "iad"});
  ASSERT_EQ(plan.exit_code, 0) << plan;
  ASSERT_THAT(plan.out, HasSubstr("10.3.0.0/16"));
  EXPECT_THAT(plan.out, HasSubstr("CLASS  OBJECTIVE"));  // the elephant classes, each with its protection

  struct Case {
    std::string kind, singular, id, list_field, id_field, header;
  };
  const std::vector<Case> cases = {
      {"facilities", "facility", "iad", "facilities", "id", "ID "},
      {"nodes", "node", "iad-br1", "nodes", "id", "ID "},
      {"links", "link", "iad-nyc", "links", "id", "ID "},
      {"fabrics", "fabric", "iad", "fabrics", "facility_id", "FACILITY "},
      {"services", "service", "retriever", "services", "id", "ID "},
      {"workloads", "workload", "rag-nyc", "workloads", "id", "ID "},
      {"intents", "intent", "drain-link-iad-nyc", "intents", "id", "ID "},
      {"plan", "plan", "iad", "plan", "", "generation "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind);
    for (const std::string format : {"table", "wide"}) {
      const TectlRun run = Online({"get", c.kind, "-o", format});
      ASSERT_EQ(run.exit_code, 0) << run;
      EXPECT_THAT(run.out, StartsWith(c.header));
      EXPECT_GE(LineCount(run.out), 2u) << run;
    }
    TectlRun run = Online({"get", c.kind, "-o", "json"});
    ASSERT_EQ(run.exit_code, 0) << run;
    const auto json = ParseJson<google::protobuf::Struct>(run.out);
    ASSERT_TRUE(json.fields().contains(c.list_field)) << run;
    if (c.kind != "plan") {
      EXPECT_GT(json.fields().at(c.list_field).list_value().values_size(), 0);
    }
    run = Online({"get", c.kind, "-o", "yaml"});
    ASSERT_EQ(run.exit_code, 0) << run;
    EXPECT_TRUE(YAML::Load(run.out)[c.list_field].IsDefined()) << run;

    // One entity (for plan: one site).
    run = Online({"get", c.singular, c.id, "-o", "json"});
    ASSERT_EQ(run.exit_code, 0) << run;
    const auto one = ParseJson<google::protobuf::Struct>(run.out);
    if (c.kind == "plan") {
      EXPECT_EQ(one.fields().at("plan").struct_value().fields().at("sites").list_value().values_size(), 1);
    } else {
      EXPECT_EQ(one.fields().at(c.id_field).string_value(), c.id);
      run = Online({"get", c.singular, c.id});
      ASSERT_EQ(run.exit_code, 0) << run;
      EXPECT_EQ(LineCount(run.out), 2u) << run;
      run = Online({"get", c.singular, c.id, "-o", "yaml"});
      ASSERT_EQ(run.exit_code, 0) << run;
      EXPECT_EQ(YAML::Load(run.out)[c.id_field].as<std::string>(), c.id) << run;
    }

    // describe: every field under the kind, and what follows from the rest.
    const std::vector<std::string> describe = c.kind == "plan"
                                                  ? std::vector<std::string>{"describe", "plan"}
                                                  : std::vector<std::string>{"describe", c.singular, c.id};
    run = Online(describe);
    ASSERT_EQ(run.exit_code, 0) << run;
    const YAML::Node yaml = YAML::Load(run.out);
    EXPECT_TRUE(yaml[c.singular].IsMap()) << run;
    EXPECT_TRUE(yaml["derived"].IsMap()) << run;
    std::vector<std::string> as_json = describe;
    as_json.insert(as_json.end(), {"-o", "json"});
    run = Online(as_json);
    ASSERT_EQ(run.exit_code, 0) << run;
    const auto described = ParseJson<google::protobuf::Struct>(run.out);
    EXPECT_TRUE(described.fields().contains(c.singular)) << run;

    if (c.kind != "plan") {
      for (const std::string verb : {"get", "describe"}) {
        run = Online({verb, c.singular, "nope"});
        EXPECT_EQ(run.exit_code, 1) << run;
        EXPECT_THAT(run.err, StartsWith(absl::StrCat("tectl: ", c.singular, " \"nope\" not found")));
        EXPECT_EQ(LineCount(run.err), 1u) << run;
      }
    }
  }

  // Derived facts and the intent's effect.
  TectlRun link = Online({"describe", "link", "iad-nyc", "-o", "json"});
  ASSERT_EQ(link.exit_code, 0) << link;
  const auto derived = ParseJson<google::protobuf::Struct>(link.out).fields().at("derived").struct_value();
  EXPECT_EQ(derived.fields().at("reverse_link").string_value(), "nyc-iad");
  EXPECT_THAT(derived.fields().at("state").string_value(), HasSubstr("drained"));
  TectlRun facility = Online({"describe", "facility", "iad"});
  ASSERT_EQ(facility.exit_code, 0) << facility;
  const YAML::Node iad = YAML::Load(facility.out)["derived"];
  EXPECT_EQ(iad["nodes"][0].as<std::string>(), "iad-br1");
  EXPECT_THAT(iad["fabric"]["shape"].as<std::string>(), HasSubstr("2 planes x 8 rails"));
  TectlRun intents = Online({"get", "intents"});
  EXPECT_THAT(intents.out, HasSubstr("link/iad-nyc"));
  EXPECT_THAT(intents.out, HasSubstr("fiber work"));
  TectlRun filtered = Online({"get", "links", "--facility", "lon", "-o", "json"});
  ASSERT_EQ(filtered.exit_code, 0) << filtered;
  const auto from_lon = ParseJson<v1::ListLinksResponse>(filtered.out);
  EXPECT_GT(from_lon.links_size(), 0);
  for (const auto& l : from_lon.links()) EXPECT_EQ(l.src_facility_id(), "lon");

  TectlRun undrained = Online({"undrain", "link", "iad-nyc"});
  EXPECT_EQ(undrained.exit_code, 0) << undrained;
}

TEST_F(TectlTest, ViewerReadsButCannotImport) {
  const uint64_t before = LastSeq();
  TectlRun read = Online({"get", "facilities"}, "viewer");
  EXPECT_EQ(read.exit_code, 0) << read;
  TectlRun refused = Online({"import", RepetitaDir() + "/Abilene.graph", "--replace-workloads"}, "viewer");
  EXPECT_EQ(refused.exit_code, 1) << refused;
  EXPECT_THAT(refused.err, StartsWith("tectl: PERMISSION_DENIED: "));
  EXPECT_THAT(refused.err, HasSubstr("admin"));
  EXPECT_EQ(ImportsAfter(before), 0);
}

TEST_F(TectlTest, MalformedFileIsRefusedWithItsLinesAndChangesNothing) {
  const uint64_t before = LastSeq();
  TempDir scratch{"tectl"};
  const std::string bad = scratch.path() + "/bad.graph";
  std::ofstream(bad) << "NODES 2\n"
                        "label x y\n"
                        "a -77.0 39.0\n"
                        "b -87.6 41.8\n"
                        "\n"
                        "EDGES 2\n"
                        "label src dest weight bw delay\n"
                        "e0 0 1 10 1000000 10\n"
                        "e1 0 7 10 1000000 10\n";  // line 9: no node 7
  TectlRun run = Online({"import", bad, "--replace-workloads"});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr(bad + ":9: "));
  EXPECT_THAT(run.err, HasSubstr("tectl: nothing imported from " + bad));
  // The same offline: the file is refused before the store is touched.
  run = Tectl({"--store", scratch.path() + "/state", "import", bad});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr(bad + ":9: "));
  EXPECT_FALSE(fs::exists(scratch.path() + "/state"));

  const std::string unknown = scratch.path() + "/topology.txt";
  std::ofstream(unknown) << "hello\n";
  run = Online({"import", unknown});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("unknown topology format"));
  run = Online({"import", scratch.path() + "/missing.yaml"});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_EQ(ImportsAfter(before), 0);
}

TEST_F(TectlTest, AWholeLargeInventoryFitsInOneRequest) {
  // Cogentco with its demands is several MB: above gRPC's default 4 MB limit.
  ResetModel();
  const RepetitaCounts cogentco = CountRepetita("Cogentco");
  const uint64_t before = LastSeq();
  TectlRun run =
      Online({"import", RepetitaDir() + "/Cogentco.graph", "--replace-workloads", "--dry-run", "-o", "yaml"});
  ASSERT_EQ(run.exit_code, 0) << run;
  const YAML::Node counts = YAML::Load(run.out)["counts"];
  ASSERT_TRUE(counts.IsSequence()) << run;
  bool saw_workloads = false;
  for (const auto& count : counts) {
    if (count["kind"].as<std::string>() != "workload") continue;
    saw_workloads = true;
    EXPECT_EQ(count["added"].as<int>() + count["changed"].as<int>() + count["unchanged"].as<int>(),
              cogentco.demands_with_traffic);
  }
  EXPECT_TRUE(saw_workloads);
  EXPECT_EQ(ImportsAfter(before), 0);
}

TEST_F(TectlTest, ListsLargerThanGrpcsDefaultLimitComeThrough) {
  // The backbone with 60,000 more workloads: ~6 MB each way, above gRPC's
  // default 4 MB receive limit (on pathcomp for the import, on tectl for the list).
  ResetModel();
  TempDir scratch{"tectl"};
  const std::string file = scratch.path() + "/bulk.yaml";
  constexpr int kBulk = 60'000;
  {
    std::ofstream out(file);
    out << ReadFile(Backbone());
    const std::string padding(48, 'x');
    for (int i = 0; i < kBulk; ++i) {
      out << "  - {id: bulk-" << i << "-" << padding << ", kind: elephant, src: iad, dst_prefix: 10.4.0.0/16, "
          << "demand_gbps: 0.001, priority: 7}\n";
    }
  }
  TectlRun run = Online({"import", file});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(ImportRow(run.out, "workload")[0], kBulk);
  run = Online({"get", "workloads", "-o", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_GT(run.out.size(), 4u << 20);
  EXPECT_EQ(ParseJson<v1::ListWorkloadsResponse>(run.out).workloads_size(), kBulk + 3);
  ResetModel();
}

TEST_F(TectlTest, StoreOfARunningPathcompIsReadButNotImportedInto) {
  TectlRun online = Online({"get", "facilities", "-o", "json"});
  ASSERT_EQ(online.exit_code, 0) << online;
  TectlRun offline = Tectl({"--store", StateDir(), "get", "facilities", "-o", "json"});
  ASSERT_EQ(offline.exit_code, 0) << offline;
  EXPECT_EQ(ParseJson<v1::ListFacilitiesResponse>(offline.out).facilities_size(),
            ParseJson<v1::ListFacilitiesResponse>(online.out).facilities_size());
  offline = Tectl({"--store", StateDir(), "journal", "-o", "json", "--limit", "5"});
  ASSERT_EQ(offline.exit_code, 0) << offline;
  EXPECT_GT(ParseJson<v1::ListJournalResponse>(offline.out).entries_size(), 0);

  const uint64_t before = LastSeq();
  TectlRun refused = Tectl({"--store", StateDir(), "import", Backbone()});
  EXPECT_EQ(refused.exit_code, 1) << refused;
  EXPECT_THAT(refused.err,
              HasSubstr("is in use, probably by a running pathcomp; import online with --server"));
  EXPECT_EQ(LineCount(refused.err), 1u) << refused;
  EXPECT_EQ(ImportsAfter(before), 0);
  EXPECT_TRUE(lab_->process("pathcomp")->running());
  EXPECT_EQ(Online({"get", "facilities"}).exit_code, 0);
}

TEST_F(TectlTest, BadUsageExitsTwoWithOneLineAndTheUsage) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--server", "127.0.0.1:1", "--store", "/tmp", "get", "links"},
                                             {"--store", "/tmp", "get", "links", "-o", "xml"},
                                             {"--store", "/tmp", "journal", "--limit", "0"},
                                             {"--store", "/tmp", "journal", "--from", "x"},
                                             {"--store", "/tmp", "get", "links", "--replace-workloads"},
                                             {"--store", "/tmp", "frobnicate"},
                                             {"get", "links"}}) {
    const TectlRun run = Tectl(args);
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_THAT(run.err, StartsWith("tectl: "));
    EXPECT_THAT(run.err, HasSubstr("\nusage:\n  tectl "));
    EXPECT_TRUE(run.out.empty());
  }
}

}  // namespace
}  // namespace geodesic::cli
