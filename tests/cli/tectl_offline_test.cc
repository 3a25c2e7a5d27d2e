// The real tectl binary on store directories, without any pathcomp: import
// into a fresh store, then read it back (get, describe, journal, also of a
// journal its retention trimmed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "geodesic/v1/operator.pb.h"
#include "state/rocks_store.h"
#include "tests/cli/tectl_testing.h"
#include "yaml-cpp/yaml.h"

namespace geodesic::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace ::geodesic::cli::tectl_testing;  // NOLINT: test helpers
namespace fs = std::filesystem;

// A journal its retention trimmed: tectl lists what is kept and says that
// the older entries were dropped.
TEST(TectlOfflineTest, JournalSaysWhatItsRetentionDropped) {
  TempDir scratch{"tectl"};
  const std::string store = scratch.path() + "/state";
  ASSERT_EQ(Tectl({"--store", store, "import", RepetitaDir() + "/Abilene.graph"}).exit_code, 0);
  ASSERT_EQ(Tectl({"--store", store, "import", Backbone(), "--replace-workloads"}).exit_code, 0);
  {
    auto opened = state::OpenRocksStore(store);
    ASSERT_TRUE(opened.ok()) << opened.status();
    ASSERT_EQ((*opened)->TrimJournal(2).value(), 1u);
  }
  TectlRun run = Tectl({"--store", store, "journal", "--from", "1"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.err, HasSubstr("The journal keeps seq 2 on: older entries were dropped by its retention"));
  EXPECT_THAT(run.out, HasSubstr("import of " + Absolute(Backbone())));
  EXPECT_THAT(run.out, Not(HasSubstr("Abilene")));
  run = Tectl({"--store", store, "journal", "-o", "json"});
  ASSERT_EQ(run.exit_code, 0) << run;
  const auto journal = ParseJson<v1::ListJournalResponse>(run.out);
  EXPECT_EQ(journal.first_seq(), 2u);
  EXPECT_EQ(journal.last_seq(), 2u);
  ASSERT_EQ(journal.entries_size(), 1);
  EXPECT_EQ(journal.entries(0).seq(), 2u);
  run = Tectl({"--store", store, "journal"});  // the newest: nothing asked that was dropped
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(run.err, "");
}

TEST(TectlOfflineTest, ImportsIntoAFreshStoreAndReadsItBack) {
  TempDir scratch{"tectl"};
  const std::string store = scratch.path() + "/state";
  const std::string graph = RepetitaDir() + "/Abilene.graph";
  const RepetitaCounts abilene = CountRepetita("Abilene");

  TectlRun run = Tectl({"--store", store, "import", graph});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(ImportRow(run.out, "facility")[0], abilene.nodes);
  EXPECT_EQ(ImportRow(run.out, "link")[0], abilene.edges);
  EXPECT_EQ(ImportRow(run.out, "workload")[0], abilene.demands_with_traffic);
  EXPECT_THAT(run.out, HasSubstr("journal seq 1"));

  run = Tectl({"--store", store, "get", "links", "-o", "json"});
  ASSERT_EQ(run.exit_code, 0) << run;
  const auto links = ParseJson<v1::ListLinksResponse>(run.out);
  ASSERT_EQ(links.links_size(), abilene.edges);
  run = Tectl({"--store", store, "get", "workloads", "-o", "yaml"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(YAML::Load(run.out)["workloads"].size(), static_cast<size_t>(abilene.demands_with_traffic));
  run = Tectl({"--store", store, "describe", "link", links.links(0).id()});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(YAML::Load(run.out)["link"]["id"].as<std::string>(), links.links(0).id());

  const std::string cause = absl::StrCat("import of ", Absolute(graph), " by tectl-test (offline)");
  run = Tectl({"--store", store, "journal", "-o", "json"});
  ASSERT_EQ(run.exit_code, 0) << run;
  auto journal = ParseJson<v1::ListJournalResponse>(run.out);
  ASSERT_EQ(journal.entries_size(), 1);
  EXPECT_EQ(journal.entries(0).cause(), cause);
  run = Tectl({"--store", store, "journal", "-o", "wide"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr(cause));
  EXPECT_THAT(run.out, HasSubstr("link/" + links.links(0).id()));  // wide lists every change

  // A dry run and a refused import leave the journal as it was.
  run = Tectl({"--store", store, "import", Backbone(), "--replace-workloads", "--dry-run"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("dry run"));
  run = Tectl({"--store", store, "import", Backbone()});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, StartsWith("tectl: "));
  run = Tectl({"--store", store, "journal", "-o", "json"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(ParseJson<v1::ListJournalResponse>(run.out).last_seq(), 1u);

  // Export writes the project format that imports back as no change.
  const std::string exported = scratch.path() + "/exported.yaml";
  run = Tectl({"--store", store, "export", exported});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat("exported ", abilene.nodes, " facilities")));
  run = Tectl({"--store", store, "import", exported});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("nothing to change"));
  EXPECT_EQ(ImportRow(run.out, "link")[3], abilene.edges);  // unchanged
  run = Tectl({"--store", store, "export"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(YAML::Load(run.out)["links"].size(), static_cast<size_t>(abilene.edges));
  run = Tectl({"--store", store, "export", "a.yaml", "b.yaml"});
  EXPECT_EQ(run.exit_code, 2) << run;

  run = Tectl({"--store", scratch.path() + "/missing", "get", "links"});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("there is no store"));
  EXPECT_FALSE(fs::exists(scratch.path() + "/missing"));
}

}  // namespace
}  // namespace geodesic::cli
