// The model's import path end to end, on real RocksDB in a temp dir: the
// REPETITA networks of ../shared/data imported into a store and read back by a
// fresh Model, Cogentco's snapshot checked against the file edge by edge, bad
// files refused before the store is touched, the import semantics
// (Model::ImportInventory, ApplyConfiguredInventory), and the incremental
// snapshot against a rebuild from scratch.
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
#include "pathcomp/service/model.h"
#include "pathcomp/solver/snapshot.h"
#include "state/rocks_store.h"
#include "tests/state/temp_dir.h"
#include "tests/topology/topology_testing.h"
#include "topology/import.h"
#include "topology/repetita.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::HasSubstr;
using state::Kind;
using state::testing_support::TempDir;
using topology::testing::RepetitaDir;
using topology::testing::ScratchDir;

constexpr const char* kDatasets[] = {"Abilene", "Geant2009", "AttMpls",   "Esnet",
                                     "Deltacom", "GtsCe",    "UsCarrier", "Cogentco"};

std::string GraphPath(const std::string& name) { return RepetitaDir() + "/" + name + ".graph"; }
std::string DemandsPath(const std::string& name) {
  return RepetitaDir() + "/" + name + ".0000.demands";
}

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

absl::StatusOr<std::unique_ptr<Model>> OpenModel(const std::string& dir) {
  auto store = state::OpenRocksStore(dir);
  if (!store.ok()) return store.status();
  return Model::Open(*std::move(store));
}

// What `tectl import` and pathcomp's configured inventory do with a file:
// read it in whatever format it is, then import it.
absl::StatusOr<ImportResult> ImportFile(Model& model, const std::string& path,
                                        const ImportOptions& options = {}) {
  auto inventory = topology::ImportTopology(path);
  if (!inventory.ok()) return inventory.status();
  return model.ImportInventory(*inventory, absl::StrCat("import of ", path), options);
}

const ImportCount& CountOf(const ImportResult& result, Kind kind) {
  for (const auto& count : result.counts) {
    if (count.kind == kind) return count;
  }
  static const ImportCount kNone{kind};
  ADD_FAILURE() << "no count for kind " << static_cast<int>(kind);
  return kNone;
}

// Every entity of the model, in a form two models can be compared by.
std::string Entities(const Model& model) {
  std::string out;
  auto add = [&out](const auto& items) {
    for (const auto& item : items) absl::StrAppend(&out, item.ShortDebugString(), "\n");
    absl::StrAppend(&out, "--\n");
  };
  add(model.Facilities());
  add(model.Nodes());
  add(model.Links());
  add(model.Fabrics());
  add(model.Services());
  add(model.Workloads());
  add(model.Intents());
  return out;
}

v1::Link LinkOf(const Model& model, const std::string& id) {
  for (const auto& link : model.Links()) {
    if (link.id() == id) return link;
  }
  ADD_FAILURE() << "no link " << id;
  return {};
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
      auto model = OpenModel(dir.Sub("db"));
      ASSERT_TRUE(model.ok()) << model.status();
      auto imported = (*model)->ImportInventory(*inventory, absl::StrCat("import of ", name));
      ASSERT_TRUE(imported.ok()) << imported.status();
      EXPECT_EQ(imported->journal_seq, 1u);  // one commit
      EXPECT_EQ(CountOf(*imported, Kind::kFacility).added, nodes.rows.size());
      EXPECT_EQ(CountOf(*imported, Kind::kLink).added, edges.rows.size());
      EXPECT_EQ(CountOf(*imported, Kind::kWorkload).added, demands_with_traffic);
    }
    // A fresh Model on the reopened store sees what the files hold.
    auto reopened = OpenModel(dir.Sub("db"));
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
    auto model = OpenModel(dir.Sub("db"));
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE((*model)->ImportInventory(*inventory, "import of Cogentco").ok());
  }
  auto reopened = OpenModel(dir.Sub("db"));
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

// A store that holds Abilene, imported from the dataset.
class StoredAbileneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto abilene = topology::LoadRepetita(GraphPath("Abilene"), DemandsPath("Abilene"));
    ASSERT_TRUE(abilene.ok()) << abilene.status();
    abilene_ = *std::move(abilene);
    ASSERT_EQ(abilene_.links.size(), 28u);
    ASSERT_EQ(abilene_.links[0].id(), "edge_0");
    Reopen();
    auto imported = model_->ImportInventory(abilene_, "import of Abilene");
    ASSERT_TRUE(imported.ok()) << imported.status();
    ASSERT_TRUE(imported->changed());
  }

  // Closes the store and opens it again in a fresh Model.
  void Reopen() {
    model_.reset();
    auto model = OpenModel(dir_.Sub("db"));
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
  }

  // Reports `link` (of `facility`) with the given health, as that facility's agent.
  void ReportHealth(const std::string& facility, const std::string& link, v1::OperState state,
                    uint64_t rtt_us) {
    uint64_t& seq = seqs_[facility];
    if (seq == 0) {
      ASSERT_TRUE(model_->OpenSession(facility, "agent", 1).ok());
    }
    v1::AgentMessage message;
    v1::Update& update = seq == 0 ? *message.mutable_snapshot() : *message.mutable_delta();
    update.set_seq(++seq);
    auto* report = update.add_links();
    report->set_link_id(link);
    report->mutable_health()->set_state(state);
    report->mutable_health()->set_rtt_us(rtt_us);
    auto applied = model_->ApplyReport(facility, "agent", 1, message, "test-agent");
    ASSERT_TRUE(applied.ok()) << applied.status();
    if (seq == 1) {
      v1::AgentMessage sync;
      sync.mutable_sync()->set_seq(++seq);
      ASSERT_TRUE(model_->ApplyReport(facility, "agent", 1, sync, "test-agent").ok());
    }
  }

  TempDir dir_;
  topology::Topology abilene_;
  std::unique_ptr<Model> model_;
  std::map<std::string, uint64_t> seqs_;
};

class BadInputTest : public StoredAbileneTest {
 protected:
  // Imports `path` through the whole path; expects it refused with
  // InvalidArgument and the store as it was. Returns the message.
  std::string Refused(const std::string& path) {
    const uint64_t seq = model_->LastJournalSeq();
    const std::string before = Entities(*model_);
    auto imported = ImportFile(*model_, path, {.replace_workloads = true});
    EXPECT_FALSE(imported.ok());
    EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument) << imported.status();
    EXPECT_EQ(model_->LastJournalSeq(), seq);
    EXPECT_EQ(Entities(*model_), before);
    Reopen();
    EXPECT_EQ(model_->LastJournalSeq(), seq);
    EXPECT_EQ(Entities(*model_), before);
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

  ScratchDir files_;
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
  // (v) A self-loop.
  path = Repetita("loop", WithLine(kGraph, 11, "e2 2 2 10 1000000 100"));
  EXPECT_THAT(Refused(path), HasSubstr(At(path, 11) + "self-loop: edge e2 goes from node 2 to itself"));
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

// --- Import semantics ---

using ImportSemanticsTest = StoredAbileneTest;

TEST_F(ImportSemanticsTest, ImportingTheSameInventoryAgainChangesNothing) {
  const uint64_t seq = model_->LastJournalSeq();
  const std::string before = Entities(*model_);
  auto again = model_->ImportInventory(abilene_, "import of Abilene, again");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->changed());
  EXPECT_EQ(again->journal_seq, 0u);
  for (const ImportCount& count : again->counts) {
    EXPECT_EQ(count.added + count.changed + count.removed, 0u) << static_cast<int>(count.kind);
  }
  EXPECT_EQ(CountOf(*again, Kind::kLink).unchanged, 28u);
  EXPECT_EQ(CountOf(*again, Kind::kWorkload).unchanged, 110u);
  EXPECT_EQ(model_->LastJournalSeq(), seq);
  EXPECT_EQ(Entities(*model_), before);
}

TEST_F(ImportSemanticsTest, AChangedCapacityIsAChangeAndKeepsTheMeasuredHealth) {
  ReportHealth("0_new_york", "edge_0", v1::OPER_STATE_UP, 7000);
  ASSERT_EQ(LinkOf(*model_, "edge_0").health().state(), v1::OPER_STATE_UP);
  const double capacity = abilene_.links[0].capacity_gbps();
  topology::Topology upgraded = abilene_;
  upgraded.links[0].set_capacity_gbps(capacity * 4);

  auto imported = model_->ImportInventory(upgraded, "capacity upgrade");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_TRUE(imported->changed());
  EXPECT_EQ(CountOf(*imported, Kind::kLink).changed, 1u);
  EXPECT_EQ(CountOf(*imported, Kind::kLink).unchanged, 27u);
  EXPECT_EQ(CountOf(*imported, Kind::kFacility).unchanged, 11u);
  for (int reopened = 0; reopened < 2; ++reopened) {
    SCOPED_TRACE(reopened ? "after reopening" : "in memory");
    const v1::Link link = LinkOf(*model_, "edge_0");
    EXPECT_DOUBLE_EQ(link.capacity_gbps(), capacity * 4);
    EXPECT_EQ(link.health().state(), v1::OPER_STATE_UP);
    EXPECT_EQ(link.health().rtt_us(), 7000u);
    const auto snapshot = model_->CurrentSnapshot();
    const int index = snapshot->LinkIndex("edge_0");
    ASSERT_GE(index, 0);
    EXPECT_DOUBLE_EQ(snapshot->link_capacity_gbps(index), capacity * 4);
    EXPECT_TRUE(snapshot->link_state(index).usable);
    EXPECT_EQ(snapshot->link_state(index).cost_us, 3500u);  // rtt / 2
    Reopen();
  }
}

TEST_F(ImportSemanticsTest, RemovingADrainedLinkIsRefusedAndChangesNothing) {
  v1::Intent drain;
  drain.set_id("drain-ny-chicago");
  drain.mutable_drain()->mutable_target()->set_link_id("edge_0");
  ASSERT_TRUE(model_->AddIntent(drain, "alice", 1).ok());
  topology::Topology without = abilene_;
  without.links.erase(without.links.begin());
  const uint64_t seq = model_->LastJournalSeq();
  const std::string before = Entities(*model_);

  auto refused = model_->ImportInventory(without, "remove edge_0");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("intent drain-ny-chicago"));
  EXPECT_EQ(model_->LastJournalSeq(), seq);
  EXPECT_EQ(Entities(*model_), before);
  Reopen();
  EXPECT_EQ(Entities(*model_), before);

  // Once the intent is gone, the same import goes through.
  ASSERT_TRUE(model_->DeleteIntent("drain-ny-chicago", "alice").ok());
  auto imported = model_->ImportInventory(without, "remove edge_0");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(CountOf(*imported, Kind::kLink).removed, 1u);
  EXPECT_EQ(model_->Links().size(), 27u);
}

TEST_F(ImportSemanticsTest, ADryRunCountsButChangesNothing) {
  topology::Topology edited = abilene_;
  edited.links[1].set_capacity_gbps(edited.links[1].capacity_gbps() * 2);
  edited.links.erase(edited.links.begin() + 2);
  const uint64_t seq = model_->LastJournalSeq();
  const std::string before = Entities(*model_);

  auto dry = model_->ImportInventory(edited, "what if", {.dry_run = true});
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_FALSE(dry->changed());
  EXPECT_EQ(CountOf(*dry, Kind::kLink).changed, 1u);
  EXPECT_EQ(CountOf(*dry, Kind::kLink).removed, 1u);
  EXPECT_EQ(CountOf(*dry, Kind::kLink).unchanged, 26u);
  EXPECT_EQ(model_->LastJournalSeq(), seq);
  EXPECT_EQ(Entities(*model_), before);
  Reopen();
  EXPECT_EQ(Entities(*model_), before);

  // The real run counts the same and changes what it counted.
  auto real = model_->ImportInventory(edited, "for real");
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_TRUE(real->changed());
  EXPECT_EQ(CountOf(*real, Kind::kLink).changed, 1u);
  EXPECT_EQ(CountOf(*real, Kind::kLink).removed, 1u);
  EXPECT_EQ(model_->Links().size(), 27u);
}

TEST_F(ImportSemanticsTest, ReplaceWorkloadsRemovesTheWorkloadsTheFileDoesNotHave) {
  v1::Workload extra;
  extra.set_id("extra-flow");
  extra.mutable_elephant()->set_src_facility_id("0_new_york");
  extra.mutable_elephant()->set_dst_prefix(abilene_.facilities[1].prefixes(0));
  extra.mutable_elephant()->set_demand_gbps(5);
  ASSERT_TRUE(model_->AddWorkload(extra, "alice").ok());
  ASSERT_EQ(model_->Workloads().size(), 111u);

  // By default the file's workloads are added or replaced; others stay.
  auto kept = model_->ImportInventory(abilene_, "import, workloads merged");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_FALSE(kept->changed());
  EXPECT_EQ(CountOf(*kept, Kind::kWorkload).removed, 0u);
  EXPECT_EQ(model_->Workloads().size(), 111u);

  auto replaced =
      model_->ImportInventory(abilene_, "import, workloads replaced", {.replace_workloads = true});
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_TRUE(replaced->changed());
  EXPECT_EQ(CountOf(*replaced, Kind::kWorkload).removed, 1u);
  EXPECT_EQ(CountOf(*replaced, Kind::kWorkload).unchanged, 110u);
  Reopen();
  const auto workloads = model_->Workloads();
  EXPECT_EQ(workloads.size(), 110u);
  EXPECT_TRUE(std::none_of(workloads.begin(), workloads.end(),
                           [](const v1::Workload& w) { return w.id() == "extra-flow"; }));
}

TEST_F(ImportSemanticsTest, TheConfiguredInventoryIsAppliedOncePerContent) {
  const std::string path = "/etc/geodesic/abilene.graph";
  // The store already holds it (imported in SetUp): applied, nothing changed, remembered.
  auto first = model_->ApplyConfiguredInventory(abilene_, path);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->has_value());
  EXPECT_FALSE((*first)->changed());
  auto second = model_->ApplyConfiguredInventory(abilene_, path);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->has_value());

  // An operator's import since is not undone by a restart with the same file.
  topology::Topology operator_edit = abilene_;
  operator_edit.links[3].set_igp_metric(77);
  ASSERT_TRUE(model_->ImportInventory(operator_edit, "tectl import").ok());
  Reopen();
  const uint64_t seq = model_->LastJournalSeq();
  auto restart = model_->ApplyConfiguredInventory(abilene_, path);
  ASSERT_TRUE(restart.ok()) << restart.status();
  EXPECT_FALSE(restart->has_value());
  EXPECT_EQ(model_->LastJournalSeq(), seq);
  EXPECT_EQ(LinkOf(*model_, abilene_.links[3].id()).igp_metric(), 77u);

  // A changed file is applied.
  topology::Topology edited = abilene_;
  edited.links[5].set_capacity_gbps(edited.links[5].capacity_gbps() * 10);
  auto changed = model_->ApplyConfiguredInventory(edited, path);
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(changed->has_value());
  EXPECT_TRUE((*changed)->changed());
  EXPECT_EQ(CountOf(**changed, Kind::kLink).changed, 2u);  // the edit, and the operator's undone
  EXPECT_DOUBLE_EQ(LinkOf(*model_, edited.links[5].id()).capacity_gbps(),
                   edited.links[5].capacity_gbps());
  Reopen();
  auto again = model_->ApplyConfiguredInventory(edited, path);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->has_value());
}

TEST(ConfiguredInventoryTest, AnEmptyStoreGetsTheWholeFileOnce) {
  TempDir dir;
  auto abilene = topology::LoadRepetita(GraphPath("Abilene"), DemandsPath("Abilene"));
  ASSERT_TRUE(abilene.ok()) << abilene.status();
  {
    auto model = OpenModel(dir.Sub("db"));
    ASSERT_TRUE(model.ok()) << model.status();
    auto applied = (*model)->ApplyConfiguredInventory(*abilene, "abilene.graph");
    ASSERT_TRUE(applied.ok()) << applied.status();
    ASSERT_TRUE(applied->has_value());
    EXPECT_EQ(CountOf(**applied, Kind::kFacility).added, 11u);
    EXPECT_EQ(CountOf(**applied, Kind::kLink).added, 28u);
    EXPECT_EQ(CountOf(**applied, Kind::kWorkload).added, 110u);
  }
  auto model = OpenModel(dir.Sub("db"));
  ASSERT_TRUE(model.ok()) << model.status();
  auto again = (*model)->ApplyConfiguredInventory(*abilene, "abilene.graph");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->has_value());
}

// --- The incremental snapshot ---

// Fails the test at the first difference between two snapshots.
void ExpectSameSnapshot(const Snapshot& incremental, const Snapshot& rebuilt) {
  ASSERT_EQ(incremental.facility_count(), rebuilt.facility_count());
  for (int f = 0; f < rebuilt.facility_count(); ++f) {
    ASSERT_EQ(incremental.facility_id(f), rebuilt.facility_id(f));
  }
  ASSERT_EQ(incremental.link_count(), rebuilt.link_count());
  for (int l = 0; l < rebuilt.link_count(); ++l) {
    SCOPED_TRACE(rebuilt.link_id(l));
    ASSERT_EQ(incremental.link_id(l), rebuilt.link_id(l));
    EXPECT_EQ(incremental.link_src(l), rebuilt.link_src(l));
    EXPECT_EQ(incremental.link_dst(l), rebuilt.link_dst(l));
    EXPECT_EQ(incremental.link_capacity_gbps(l), rebuilt.link_capacity_gbps(l));
    EXPECT_EQ(incremental.link_metric(l), rebuilt.link_metric(l));
    const LinkState& a = incremental.link_state(l);
    const LinkState& b = rebuilt.link_state(l);
    EXPECT_EQ(a.cost_us, b.cost_us);
    EXPECT_EQ(a.oper, b.oper);
    EXPECT_EQ(a.drained, b.drained);
    EXPECT_EQ(a.usable, b.usable);
  }
  EXPECT_EQ(incremental.usable_link_count(), rebuilt.usable_link_count());
  EXPECT_EQ(incremental.demands().size(), rebuilt.demands().size());
}

using IncrementalSnapshotTest = StoredAbileneTest;

TEST_F(IncrementalSnapshotTest, HealthReportsOnTopOfASnapshotEqualARebuild) {
  // Every link by the facility that reports it.
  std::map<std::string, std::vector<std::string>> links_of;
  for (const auto& link : model_->Links()) links_of[link.src_facility_id()].push_back(link.id());
  ASSERT_EQ(links_of.size(), 11u);
  const v1::OperState kStates[] = {v1::OPER_STATE_UP, v1::OPER_STATE_DOWN,
                                   v1::OPER_STATE_DEGRADED, v1::OPER_STATE_UP,
                                   v1::OPER_STATE_UNKNOWN};
  auto check = [&](const std::string& when) {
    SCOPED_TRACE(when);
    const auto incremental = model_->CurrentSnapshot();
    ExpectSameSnapshot(*incremental, Snapshot::Build(model_->View()));
  };

  model_->CurrentSnapshot();  // from here on, reports update it in place
  // Every agent reports all its links up (rtt 0 for some: the inventory latency applies).
  int n = 0;
  for (const auto& [facility, links] : links_of) {
    for (const auto& link : links) ReportHealth(facility, link, v1::OPER_STATE_UP, ++n % 3 ? 2000 + n : 0);
  }
  check("after the first reports");
  ASSERT_GT(model_->CurrentSnapshot()->usable_link_count(), 0u);

  // Deltas in several rounds, the snapshot taken between some of them only.
  for (int round = 0; round < 6; ++round) {
    for (const auto& [facility, links] : links_of) {
      for (size_t i = 0; i < links.size(); ++i) {
        if ((i + round) % 2) continue;
        ++n;
        ReportHealth(facility, links[i], kStates[n % 5], n % 4 ? 1000 + 37 * n : 0);
      }
    }
    if (round % 2) check(absl::StrCat("after round ", round));
    if (round == 2) {
      // A drain rebuilds the snapshot; later health lands on the rebuilt one.
      v1::Intent drain;
      drain.set_id("drain-chicago");
      drain.mutable_drain()->mutable_target()->set_facility_id("1_chicago");
      ASSERT_TRUE(model_->AddIntent(drain, "alice", 1).ok());
      check("after the drain");
    }
  }
  // A fresh snapshot that omits links: the sync marks them unknown.
  const auto& [facility, links] = *links_of.begin();
  ASSERT_GE(links.size(), 2u);
  ASSERT_TRUE(model_->OpenSession(facility, "agent", 2).ok());
  v1::AgentMessage snapshot;
  snapshot.mutable_snapshot()->set_seq(1);
  auto* report = snapshot.mutable_snapshot()->add_links();
  report->set_link_id(links[0]);
  report->mutable_health()->set_state(v1::OPER_STATE_UP);
  ASSERT_TRUE(model_->ApplyReport(facility, "agent", 2, snapshot, "test-agent").ok());
  v1::AgentMessage sync;
  sync.mutable_sync()->set_seq(2);
  ASSERT_TRUE(model_->ApplyReport(facility, "agent", 2, sync, "test-agent").ok());
  EXPECT_EQ(LinkOf(*model_, links[1]).health().state(), v1::OPER_STATE_UNKNOWN);
  check("after a partial snapshot and its sync");

  // The comparisons covered every kind of link state, not just one.
  const auto final_snapshot = model_->CurrentSnapshot();
  std::map<v1::OperState, int> opers;
  int drained = 0;
  for (int l = 0; l < final_snapshot->link_count(); ++l) {
    ++opers[final_snapshot->link_state(l).oper];
    drained += final_snapshot->link_state(l).drained;
  }
  EXPECT_EQ(opers.size(), 4u);  // up, down, degraded, unknown
  EXPECT_GT(drained, 0);
  EXPECT_GT(final_snapshot->usable_link_count(), 0u);
  EXPECT_LT(final_snapshot->usable_link_count(), static_cast<size_t>(final_snapshot->link_count()));
}

}  // namespace
}  // namespace geodesic::pathcomp
