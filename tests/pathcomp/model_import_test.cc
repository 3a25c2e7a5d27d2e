// The model's import path end to end, on real RocksDB in a temp dir: the
// REPETITA networks of ../shared/data imported into a store and read back by a
// fresh Model, Cogentco's snapshot checked against the file edge by edge, and
// bad files refused before the store is touched. Import semantics and the
// incremental snapshot: model_import_semantics_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pathcomp/model/model.h"
#include "pathcomp/solver/snapshot.h"
#include "state/rocks_store.h"
#include "tests/pathcomp/model_import_testing.h"
#include "tests/support/test_dirs.h"
#include "tests/topology/topology_testing.h"
#include "topology/import.h"
#include "topology/repetita.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::HasSubstr;
using namespace model_testing;  // NOLINT: the shared helpers of these tests

// One section of a REPETITA file as the file has it, read without the
// importer: the count its head announces and the whitespace-separated fields
// of each row that follows the column header.
struct FileSection {
  size_t announced = 0;
  std::vector<std::vector<std::string>> rows;
};

FileSection ReadSection(const std::string& path, const std::string& keyword) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  FileSection section;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream head(line);
    std::string word;
    if (!(head >> word) || word != keyword) continue;
    head >> section.announced;
    std::getline(in, line);  // column header
    while (section.rows.size() < section.announced && std::getline(in, line)) {
      std::istringstream fields(line);
      std::vector<std::string> row;
      for (std::string field; fields >> field;) row.push_back(field);
      section.rows.push_back(std::move(row));
    }
    break;
  }
  return section;
}

// --- Every dataset through the store ---

TEST(ModelImportTest, EveryRepetitaDatasetImportsAndReadsBackWithTheFilesCounts) {
  for (const char* name : kDatasets) {
    SCOPED_TRACE(name);
    const FileSection nodes = ReadSection(GraphPath(name), "NODES");
    const FileSection edges = ReadSection(GraphPath(name), "EDGES");
    const FileSection demands = ReadSection(DemandsPath(name), "DEMANDS");
    ASSERT_EQ(nodes.rows.size(), nodes.announced);
    ASSERT_EQ(edges.rows.size(), edges.announced);
    ASSERT_EQ(demands.rows.size(), demands.announced);
    size_t demands_with_traffic = 0;
    for (const auto& row : demands.rows) {
      ASSERT_EQ(row.size(), 4u);
      demands_with_traffic += std::stod(row[3]) > 0;
    }
    if (std::string(name) == "Cogentco") {
      EXPECT_EQ(demands.rows.size(), 38'612u);  // the figure
      EXPECT_EQ(demands_with_traffic, 38'612u - 807u);
    }

    TempDir dir;
    auto inventory = topology::LoadRepetita(GraphPath(name), DemandsPath(name));
    ASSERT_TRUE(inventory.ok()) << inventory.status();
    {
      auto model = OpenModel(dir.Join("db"));
      ASSERT_TRUE(model.ok()) << model.status();
      auto imported = (*model)->ImportInventory(*inventory, absl::StrCat("import of ", name));
      ASSERT_TRUE(imported.ok()) << imported.status();
      EXPECT_EQ(imported->journal_seq, 1u);  // one commit
      EXPECT_EQ(CountOf(*imported, Kind::kFacility).added, nodes.rows.size());
      EXPECT_EQ(CountOf(*imported, Kind::kLink).added, edges.rows.size());
      EXPECT_EQ(CountOf(*imported, Kind::kWorkload).added, demands_with_traffic);
    }
    // A fresh Model on the reopened store sees what the files hold.
    auto reopened = OpenModel(dir.Join("db"));
    ASSERT_TRUE(reopened.ok()) << reopened.status();
    const Model& model = **reopened;
    EXPECT_EQ(model.Facilities().size(), nodes.rows.size());
    EXPECT_EQ(model.Nodes().size(), nodes.rows.size());
    EXPECT_EQ(model.Links().size(), edges.rows.size());
    EXPECT_EQ(model.Workloads().size(), demands_with_traffic);
    EXPECT_EQ(model.LastJournalSeq(), 1u);
  }
}

// --- Cogentco edge by edge ---

TEST(ModelImportTest, CogentcoSnapshotFromTheStoreMatchesTheFileEdgeByEdge) {
  TempDir dir;
  {
    auto inventory = topology::LoadRepetita(GraphPath("Cogentco"), DemandsPath("Cogentco"));
    ASSERT_TRUE(inventory.ok()) << inventory.status();
    auto model = OpenModel(dir.Join("db"));
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE((*model)->ImportInventory(*inventory, "import of Cogentco").ok());
  }
  auto reopened = OpenModel(dir.Join("db"));
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  Model& model = **reopened;
  const std::shared_ptr<const Snapshot> snapshot = model.CurrentSnapshot();

  // Node i of the file is the facility whose display name is row i's label
  // (labels are unique in Cogentco: "<i>_<city>"); its snapshot index follows.
  const FileSection nodes = ReadSection(GraphPath("Cogentco"), "NODES");
  ASSERT_EQ(nodes.rows.size(), 197u);
  std::map<std::string, std::string> facility_by_label;
  for (const auto& facility : model.Facilities()) {
    EXPECT_TRUE(facility_by_label.emplace(facility.display_name(), facility.id()).second)
        << facility.display_name();
  }
  ASSERT_EQ(facility_by_label.size(), nodes.rows.size());
  std::vector<int> index_of_node;
  for (const auto& row : nodes.rows) {
    const auto it = facility_by_label.find(row[0]);
    ASSERT_NE(it, facility_by_label.end()) << row[0];
    const int index = snapshot->FacilityIndex(it->second);
    ASSERT_GE(index, 0) << it->second;
    index_of_node.push_back(index);
  }
  EXPECT_EQ(snapshot->facility_count(), static_cast<int>(nodes.rows.size()));

  // Every EDGES row is the snapshot link its label names (Cogentco's labels,
  // edge_<n>, are valid ids as they are), with its ends, metric and capacity;
  // equal counts make the match one to one.
  const FileSection edges = ReadSection(GraphPath("Cogentco"), "EDGES");
  ASSERT_EQ(edges.rows.size(), 490u);
  EXPECT_EQ(snapshot->link_count(), static_cast<int>(edges.rows.size()));
  for (const auto& row : edges.rows) {
    SCOPED_TRACE(row[0]);
    ASSERT_EQ(row.size(), 6u);  // label src dest weight bw delay
    const int link = snapshot->LinkIndex(row[0]);
    ASSERT_GE(link, 0);
    EXPECT_EQ(snapshot->link_src(link), index_of_node.at(std::stoul(row[1])));
    EXPECT_EQ(snapshot->link_dst(link), index_of_node.at(std::stoul(row[2])));
    EXPECT_EQ(snapshot->link_metric(link), std::stoul(row[3]));
    EXPECT_DOUBLE_EQ(snapshot->link_capacity_gbps(link), std::stod(row[4]) / 1e6);
    // Nothing measured yet: in the graph, not usable until an agent reports it up.
    EXPECT_EQ(snapshot->link_state(link).oper, v1::OPER_STATE_UNKNOWN);
    EXPECT_FALSE(snapshot->link_state(link).drained);
    EXPECT_FALSE(snapshot->link_state(link).usable);
  }
  EXPECT_EQ(snapshot->usable_link_count(), 0u);

  // The demands with traffic, as (src index, dst index, gbps) multisets.
  const FileSection demands = ReadSection(DemandsPath("Cogentco"), "DEMANDS");
  ASSERT_EQ(demands.rows.size(), 38'612u);
  std::map<std::tuple<int, int, double>, int> expected;
  size_t with_traffic = 0;
  for (const auto& row : demands.rows) {
    const double kbps = std::stod(row[3]);
    if (kbps == 0) continue;
    ++with_traffic;
    ++expected[{index_of_node.at(std::stoul(row[1])), index_of_node.at(std::stoul(row[2])),
                kbps / 1e6}];
  }
  std::map<std::tuple<int, int, double>, int> actual;
  for (const Demand& demand : snapshot->demands()) {
    EXPECT_EQ(demand.priority, 0u);
    ++actual[{demand.src, demand.dst, demand.gbps}];
  }
  EXPECT_EQ(snapshot->demands().size(), with_traffic);
  EXPECT_TRUE(actual == expected) << actual.size() << " distinct demands in the snapshot, "
                                  << expected.size() << " in the file";
}

// --- Bad input ---

// A small valid REPETITA pair that the cases below break one line at a time.
constexpr char kGraph[] =
    "NODES 3\n"                          // 1
    "label x y\n"                        // 2
    "a -74.0 40.7\n"                     // 3
    "b -87.6 41.8\n"                     // 4
    "c -77.0 38.9\n"                     // 5
    "\n"                                 // 6
    "EDGES 4\n"                          // 7
    "label src dest weight bw delay\n"   // 8
    "e0 0 1 10 1000000 100\n"            // 9
    "e1 1 0 10 1000000 100\n"            // 10
    "e2 1 2 10 1000000 100\n"            // 11
    "e3 2 1 10 1000000 100\n";           // 12
constexpr char kDemands[] =
    "DEMANDS 2\n"           // 1
    "label src dest bw\n"   // 2
    "d0 0 1 5000\n"         // 3
    "d1 2 0 700\n";         // 4

// A small valid project-format file.
constexpr char kYaml[] =
    "facilities:\n"                                          // 1
    "  - {id: a, position: {lat: 1, lon: 2}}\n"              // 2
    "  - {id: b, position: {lat: 3, lon: 4}}\n"              // 3
    "nodes:\n"                                               // 4
    "  - {id: a1, facility: a}\n"                            // 5
    "  - {id: b1, facility: b}\n"                            // 6
    "links:\n"                                               // 7
    "  - {id: ab, from: a1, to: b1, capacity_gbps: 10}\n";   // 8

// Replaces line `number` (1-based) of `text`.
std::string WithLine(std::string text, int number, const std::string& replacement) {
  size_t begin = 0;
  for (int line = 1; line < number; ++line) begin = text.find('\n', begin) + 1;
  const size_t end = text.find('\n', begin);
  return text.replace(begin, end - begin, replacement);
}

class BadInputTest : public StoredAbileneTest {
 protected:
  // Imports `path` through the whole path; expects it refused with
  // InvalidArgument and the store as it was. Returns the message.
  std::string Refused(const std::string& path) {
    const uint64_t seq = model_->LastJournalSeq();
    const std::string before = EntitiesText(*model_);
    auto imported = ImportFile(*model_, path, {.replace_workloads = true});
    EXPECT_FALSE(imported.ok());
    EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument) << imported.status();
    EXPECT_EQ(model_->LastJournalSeq(), seq);
    EXPECT_EQ(EntitiesText(*model_), before);
    Reopen();
    EXPECT_EQ(model_->LastJournalSeq(), seq);
    EXPECT_EQ(EntitiesText(*model_), before);
    return std::string(imported.status().message());
  }

  // A REPETITA pair named <case>.graph / <case>.0000.demands, as ImportTopology finds them.
  std::string Repetita(const std::string& name, const std::string& graph,
                       const std::string& demands = kDemands) {
    files_.Write(name + ".0000.demands", demands);
    return files_.Write(name + ".graph", graph);
  }
  static std::string At(const std::string& path, int line) {
    return absl::StrCat(path, ":", line, ": ");
  }

  TempDir files_{"model-import"};
};

TEST_F(BadInputTest, RepetitaFilesAreRefusedWithFileLineAndReasonAndTheStoreUnchanged) {
  const std::string graph = kGraph;
  // (i) Truncated: EDGES announces 4, the file ends after 1.
  std::string path = Repetita("truncated", graph.substr(0, graph.find("e1 ")));
  EXPECT_THAT(Refused(path),
              HasSubstr(At(path, 7) + "truncated: EDGES announces 4 edges, the file ends after 1"));
  // (ii) An edge to a node the file does not have.
  path = Repetita("unknown_node", WithLine(kGraph, 11, "e2 1 7 10 1000000 100"));
  EXPECT_THAT(Refused(path), HasSubstr(At(path, 11) + "dest: node 7 is out of range (NODES 3: 0..2)"));
  // (iii) A negative capacity.
  path = Repetita("negative", WithLine(kGraph, 10, "e1 1 0 10 -1000000 100"));
  EXPECT_THAT(Refused(path), HasSubstr(At(path, 10) + "bw: capacity must be positive, got -1000000"));
  // (iv) An edge label used twice.
  path = Repetita("duplicate", WithLine(kGraph, 12, "e0 2 1 10 1000000 100"));
  EXPECT_THAT(Refused(path),
              HasSubstr(At(path, 12) + "duplicate edge label \"e0\" (first at line 9)"));
  // (v) A self-loop that is also malformed (a well-formed one carries no
  // traffic and is skipped with a warning: repetita_test).
  path = Repetita("loop", WithLine(kGraph, 11, "e2 2 2 0 1000000 100"));
  EXPECT_THAT(Refused(path), HasSubstr(At(path, 11) + "weight: 0 is out of range [1, 16777215]"));
  // (vi) A non-numeric field, in the graph and in the demands beside it.
  path = Repetita("words", WithLine(kGraph, 9, "e0 0 1 10 fast 100"));
  EXPECT_THAT(Refused(path), HasSubstr(At(path, 9) + "bw: expected a number, got \"fast\""));
  path = Repetita("word_demand", kGraph, WithLine(kDemands, 4, "d1 2 0 lots"));
  EXPECT_THAT(Refused(path), HasSubstr(At(files_.path() + "/word_demand.0000.demands", 4) +
                                       "bw: expected a number, got \"lots\""));

  // The unbroken files do import through the same path: the refusals above
  // are the defects', not the harness's.
  path = Repetita("valid", kGraph);
  auto imported = ImportFile(*model_, path, {.replace_workloads = true});
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(CountOf(*imported, Kind::kLink).added, 4u);
  EXPECT_EQ(CountOf(*imported, Kind::kLink).removed, 28u);
  EXPECT_EQ(CountOf(*imported, Kind::kWorkload).added, 2u);
  EXPECT_EQ(CountOf(*imported, Kind::kWorkload).removed, 110u);
}

TEST_F(BadInputTest, ProjectFilesAreRefusedWithFileLineAndReasonAndTheStoreUnchanged) {
  std::string path = files_.Write("duplicate.yaml", WithLine(kYaml, 6, "  - {id: a1, facility: b}"));
  EXPECT_THAT(Refused(path), HasSubstr(At(path, 6) + "nodes[1].id: duplicate node id a1"));
  path = files_.Write("unknown_node.yaml",
                      WithLine(kYaml, 8, "  - {id: ab, from: a1, to: nowhere, capacity_gbps: 10}"));
  EXPECT_THAT(Refused(path), HasSubstr(At(path, 8) + "links[0].to: unknown node nowhere"));

  path = files_.Write("valid.yaml", kYaml);
  auto imported = ImportFile(*model_, path, {.replace_workloads = true});
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(CountOf(*imported, Kind::kFacility).added, 2u);
  EXPECT_EQ(CountOf(*imported, Kind::kFacility).removed, 11u);
}

}  // namespace
}  // namespace geodesic::pathcomp
