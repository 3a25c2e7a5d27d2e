// The REPETITA importer (topology/repetita.h) against the eight networks of
// ../shared/data/repetita and against malformed files.
#include "topology/repetita.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

#include "tests/topology/topology_testing.h"

namespace geodesic::topology {
namespace {

using ::testing::HasSubstr;
using testing::RepetitaDir;
using testing::TempDir;

struct Dataset {
  const char* name;
  size_t nodes;
  size_t directed_edges;
  size_t demands;
};

// The table of ../shared/data/README.md.
constexpr Dataset kDatasets[] = {
    {"Abilene", 11, 28, 110},          {"Geant2009", 34, 104, 1122},
    {"AttMpls", 25, 114, 600},         {"Esnet", 68, 184, 4556},
    {"Deltacom", 113, 366, 12656},     {"GtsCe", 149, 386, 22052},
    {"UsCarrier", 158, 378, 24806},    {"Cogentco", 197, 490, 38612},
};

std::string GraphPath(const std::string& name) { return RepetitaDir() + "/" + name + ".graph"; }
std::string DemandsPath(const std::string& name) {
  return RepetitaDir() + "/" + name + ".0000.demands";
}

// The rows of a REPETITA section as the file has them, read independently of
// the importer: the count its head announces and the fields of each row.
struct FileSection {
  size_t announced = 0;
  std::vector<std::vector<std::string>> rows;
};

FileSection ReadSection(const std::string& path, const std::string& keyword) {
  std::ifstream in(path);
  std::string line;
  FileSection section;
  while (std::getline(in, line)) {
    std::istringstream head(line);
    std::string word;
    head >> word;
    if (word != keyword) continue;
    head >> section.announced;
    std::getline(in, line);  // column header
    while (section.rows.size() < section.announced && std::getline(in, line)) {
      std::istringstream fields(line);
      std::vector<std::string> row;
      for (std::string field; fields >> field;) row.push_back(field);
      section.rows.push_back(row);
    }
    break;
  }
  return section;
}

TEST(RepetitaTest, EveryDatasetImportsWithTheCountsOfTheReadmeAndHeaders) {
  for (const Dataset& dataset : kDatasets) {
    SCOPED_TRACE(dataset.name);
    auto topology = LoadRepetita(GraphPath(dataset.name), DemandsPath(dataset.name));
    ASSERT_TRUE(topology.ok()) << topology.status();
    const FileSection nodes = ReadSection(GraphPath(dataset.name), "NODES");
    const FileSection edges = ReadSection(GraphPath(dataset.name), "EDGES");
    const FileSection demands = ReadSection(DemandsPath(dataset.name), "DEMANDS");
    EXPECT_EQ(nodes.announced, dataset.nodes);
    EXPECT_EQ(edges.announced, dataset.directed_edges);
    EXPECT_EQ(demands.announced, dataset.demands);
    EXPECT_EQ(demands.rows.size(), dataset.demands);

    EXPECT_EQ(topology->facilities.size(), dataset.nodes);
    EXPECT_EQ(topology->nodes.size(), dataset.nodes);
    EXPECT_EQ(topology->links.size(), dataset.directed_edges);
    // Every demand row with traffic is a workload; zero rows are pairs without traffic.
    size_t zero_rows = 0;
    for (const auto& row : demands.rows) zero_rows += std::stod(row[3]) == 0;
    EXPECT_EQ(topology->workloads.size(), dataset.demands - zero_rows);
    EXPECT_TRUE(topology->fabrics.empty());
    EXPECT_TRUE(topology->services.empty());
  }
}

TEST(RepetitaTest, CogentcoMatchesTheFileEdgeByEdge) {
  auto topology = LoadRepetita(GraphPath("Cogentco"), DemandsPath("Cogentco"));
  ASSERT_TRUE(topology.ok()) << topology.status();
  const FileSection nodes = ReadSection(GraphPath("Cogentco"), "NODES");
  const FileSection edges = ReadSection(GraphPath("Cogentco"), "EDGES");
  ASSERT_EQ(nodes.rows.size(), topology->facilities.size());
  for (size_t i = 0; i < nodes.rows.size(); ++i) {
    const v1::Facility& facility = topology->facilities[i];
    EXPECT_EQ(facility.display_name(), nodes.rows[i][0]);
    EXPECT_DOUBLE_EQ(facility.position().longitude_deg(), std::stod(nodes.rows[i][1]));
    EXPECT_DOUBLE_EQ(facility.position().latitude_deg(), std::stod(nodes.rows[i][2]));
    EXPECT_EQ(topology->nodes[i].id(), facility.id() + "-r");
    EXPECT_EQ(topology->nodes[i].facility_id(), facility.id());
  }
  // Each file edge is the link its label names, with the same ends,
  // capacity and metric; equal counts make the match one to one.
  std::map<std::string, const v1::Link*> links;
  for (const auto& link : topology->links) links[link.id()] = &link;
  ASSERT_EQ(links.size(), edges.rows.size());
  for (const auto& row : edges.rows) {
    SCOPED_TRACE(row[0]);
    ASSERT_EQ(row.size(), 6u);
    const auto it = links.find(row[0]);  // Cogentco's labels (edge_N) are valid ids already
    ASSERT_NE(it, links.end());
    const v1::Link& link = *it->second;
    const size_t src = std::stoul(row[1]);
    const size_t dst = std::stoul(row[2]);
    EXPECT_EQ(link.src_facility_id(), topology->facilities[src].id());
    EXPECT_EQ(link.dst_facility_id(), topology->facilities[dst].id());
    EXPECT_EQ(link.src_node_id(), topology->nodes[src].id());
    EXPECT_EQ(link.dst_node_id(), topology->nodes[dst].id());
    EXPECT_EQ(link.igp_metric(), std::stoul(row[3]));
    EXPECT_DOUBLE_EQ(link.capacity_gbps(), std::stod(row[4]) / 1e6);
    EXPECT_EQ(link.admin_state(), v1::ADMIN_STATE_UP);
  }
}

TEST(RepetitaTest, LatencyFollowsTheGreatCircleOrTheDelayColumnWhenUnplaced) {
  auto abilene = LoadRepetita(GraphPath("Abilene"), "");
  ASSERT_TRUE(abilene.ok()) << abilene.status();
  EXPECT_TRUE(abilene->workloads.empty());
  // edge_0: New York - Chicago, ~1,145 km of great circle: ~7.2 ms of fiber.
  const v1::Link& ny_chicago = abilene->links[0];
  EXPECT_EQ(ny_chicago.src_facility_id(), "0_new_york");
  EXPECT_EQ(ny_chicago.dst_facility_id(), "1_chicago");
  EXPECT_EQ(ny_chicago.latency_us(), FiberLatencyUs(GreatCircleKm(abilene->facilities[0].position(),
                                                                  abilene->facilities[1].position())));
  EXPECT_NEAR(static_cast<double>(ny_chicago.latency_us()), 7160, 60);

  // Cogentco node 144 ("144_None") sits at 0,0: its edges carry delay 825,
  // 0.6 km a unit -> 495 km of great circle -> 3,094 us.
  auto cogentco = LoadRepetita(GraphPath("Cogentco"), "");
  ASSERT_TRUE(cogentco.ok()) << cogentco.status();
  ASSERT_EQ(cogentco->facilities[144].display_name(), "144_None");
  size_t unplaced_links = 0;
  for (const auto& link : cogentco->links) {
    if (link.src_facility_id() != "144_none" && link.dst_facility_id() != "144_none") continue;
    ++unplaced_links;
    EXPECT_EQ(link.latency_us(), 3094u) << link.id();
  }
  EXPECT_GT(unplaced_links, 0u);
}

TEST(RepetitaTest, DemandsBecomeElephantFlowsToTheDestinationsPrefix) {
  auto topology = LoadRepetita(GraphPath("Cogentco"), DemandsPath("Cogentco"));
  ASSERT_TRUE(topology.ok()) << topology.status();
  // Facility i announces 10.<i / 256>.<i % 256>.0/24.
  EXPECT_THAT(topology->facilities[0].prefixes(), ::testing::ElementsAre("10.0.0.0/24"));
  EXPECT_THAT(topology->facilities[196].prefixes(), ::testing::ElementsAre("10.0.196.0/24"));
  std::map<std::string, std::string> owner;
  for (const auto& facility : topology->facilities) owner[facility.prefixes(0)] = facility.id();
  const FileSection demands = ReadSection(DemandsPath("Cogentco"), "DEMANDS");
  std::map<std::string, const v1::Workload*> workloads;
  for (const auto& workload : topology->workloads) workloads[workload.id()] = &workload;
  size_t checked = 0;
  for (const auto& row : demands.rows) {
    const double kbps = std::stod(row[3]);
    const auto it = workloads.find(row[0]);
    if (kbps == 0) {
      EXPECT_EQ(it, workloads.end()) << row[0];
      continue;
    }
    ASSERT_NE(it, workloads.end()) << row[0];
    const v1::ElephantFlow& flow = it->second->elephant();
    EXPECT_EQ(flow.src_facility_id(), topology->facilities[std::stoul(row[1])].id());
    EXPECT_EQ(owner[flow.dst_prefix()], topology->facilities[std::stoul(row[2])].id());
    EXPECT_DOUBLE_EQ(flow.demand_gbps(), kbps / 1e6);
    EXPECT_EQ(flow.priority(), 0u);
    ++checked;
  }
  EXPECT_EQ(checked, topology->workloads.size());
}

TEST(RepetitaTest, LabelsBecomeUniqueValidIds) {
  TempDir dir{"topology"};
  const std::string graph = dir.Write("ids.graph",
                                      "NODES 5\n"
                                      "label x y\n"
                                      "Paris,_FR 2.35 48.86\n"
                                      "Paris?_FR 2.35 48.86\n"
                                      "__Lyon 4.83 45.76\n"
                                      "?!? 0 0\n"
                                      "Marseille 5.37 43.30\n"
                                      "\n"
                                      "EDGES 6\n"
                                      "label src dest weight bw delay\n"
                                      "Link_A 0 2 10 1000000 0\n"
                                      "link-a 2 0 10 1000000 0\n"
                                      "Unique 2 4 10 1000000 0\n"
                                      "Link_A? 2 3 10 1000000 0\n"
                                      "x 4 3 10 1000000 0\n"
                                      "y 1 4 10 1000000 0\n");
  auto topology = LoadRepetita(graph, "");
  ASSERT_TRUE(topology.ok()) << topology.status();
  std::vector<std::string> facility_ids;
  for (const auto& facility : topology->facilities) facility_ids.push_back(facility.id());
  EXPECT_THAT(facility_ids,
              ::testing::ElementsAre("paris-_fr", "paris-_fr-2", "lyon", "site-3", "marseille"));
  EXPECT_EQ(topology->facilities[1].display_name(), "Paris?_FR");
  EXPECT_EQ(topology->nodes[3].id(), "site-3-r");
  // Labels keep their own id as long as the ids differ ("link_a", "link-a",
  // "link_a-"); only ids that clash fall back to the ends (see below).
  std::vector<std::string> link_ids;
  for (const auto& link : topology->links) link_ids.push_back(link.id());
  EXPECT_THAT(link_ids,
              ::testing::ElementsAre("link_a", "link-a", "unique", "link_a-", "x", "y"));
  // Node 3 is unplaced and every delay is 0: its links get the mean latency of the others.
  uint64_t placed_sum = 0;
  size_t placed = 0;
  for (const auto& link : topology->links) {
    if (link.src_facility_id() == "site-3" || link.dst_facility_id() == "site-3") continue;
    placed_sum += link.latency_us();
    ++placed;
  }
  const uint64_t mean = static_cast<uint64_t>(
      std::llround(static_cast<double>(placed_sum) / static_cast<double>(placed)));
  EXPECT_EQ(topology->links[3].latency_us(), mean);
  EXPECT_EQ(topology->links[4].latency_us(), mean);
}

TEST(RepetitaTest, ClashingEdgeLabelsFallBackToTheirEnds) {
  TempDir dir{"topology"};
  const std::string graph = dir.Write("clash.graph",
                                      "NODES 2\nlabel x y\nA 1 1\nB 2 2\n\n"
                                      "EDGES 3\nlabel src dest weight bw delay\n"
                                      "E 0 1 10 1000000 5\ne 1 0 10 1000000 5\nf 0 1 10 2000000 5\n");
  auto topology = LoadRepetita(graph, "");
  ASSERT_TRUE(topology.ok()) << topology.status();
  ASSERT_EQ(topology->links.size(), 3u);
  EXPECT_EQ(topology->links[0].id(), "a-b-1");
  EXPECT_EQ(topology->links[1].id(), "b-a-1");
  EXPECT_EQ(topology->links[2].id(), "f");
  EXPECT_DOUBLE_EQ(topology->links[2].capacity_gbps(), 2);
}

// A small valid pair of files the bad-input cases below break one line at a time.
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
    "d1 2 0 0\n";           // 4

// Replaces line `number` (1-based) of `text`.
std::string WithLine(std::string text, int number, const std::string& replacement) {
  size_t begin = 0;
  for (int line = 1; line < number; ++line) begin = text.find('\n', begin) + 1;
  const size_t end = text.find('\n', begin);
  return text.replace(begin, end - begin, replacement);
}

class RepetitaBadInputTest : public ::testing::Test {
 protected:
  // Imports a graph (and demands) with the given content; expects the error.
  std::string Error(const std::string& graph, const std::string& demands = kDemands) {
    graph_path_ = dir_.Write("net.graph", graph);
    demands_path_ = dir_.Write("net.0000.demands", demands);
    auto topology = LoadRepetita(graph_path_, demands_path_);
    EXPECT_FALSE(topology.ok());
    EXPECT_EQ(topology.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(topology.status().message());
  }
  std::string At(int line) { return graph_path_ + ":" + std::to_string(line) + ": "; }
  std::string DemandsAt(int line) { return demands_path_ + ":" + std::to_string(line) + ": "; }

  TempDir dir_{"topology"};
  std::string graph_path_, demands_path_;
};

TEST_F(RepetitaBadInputTest, TheValidBaseImports) {
  auto topology = LoadRepetita(dir_.Write("net.graph", kGraph), dir_.Write("d", kDemands));
  ASSERT_TRUE(topology.ok()) << topology.status();
  EXPECT_EQ(topology->links.size(), 4u);
  EXPECT_EQ(topology->workloads.size(), 1u);  // d1 carries nothing
}

TEST_F(RepetitaBadInputTest, TruncatedFile) {
  // The file stops after two of the three nodes: reported at the NODES line.
  const std::string text = kGraph;
  EXPECT_THAT(Error(text.substr(0, text.find("c -77"))),
              HasSubstr(At(1) + "truncated: NODES announces 3 nodes, the file ends after 2 (line 4)"));
  // And after one of the four edges.
  EXPECT_THAT(Error(text.substr(0, text.find("e1 "))),
              HasSubstr(At(7) + "truncated: EDGES announces 4 edges, the file ends after 1"));
  // A section that is not there at all.
  EXPECT_THAT(Error(text.substr(0, text.find("EDGES"))),
              HasSubstr(At(6) + "missing EDGES section (the file ends here)"));
  // Fewer rows than announced, then the next section.
  EXPECT_THAT(Error(WithLine(kGraph, 5, "")),
              HasSubstr(At(5) + "expected node 3 of 3 (NODES at line 1), got a blank line"));
  // More rows than announced.
  EXPECT_THAT(Error(std::string(kGraph) + "e4 0 2 10 1000000 100\n"),
              HasSubstr(At(13) + "unexpected content after the 4 edges that EDGES announces"));
}

TEST_F(RepetitaBadInputTest, WrongHeaders) {
  EXPECT_THAT(Error(WithLine(kGraph, 1, "NODES three")),
              HasSubstr(At(1) + "expected \"NODES <count>\", got \"NODES three\""));
  EXPECT_THAT(Error(WithLine(kGraph, 8, "label src dst weight bw delay")),
              HasSubstr(At(8) + "expected the column header \"label src dest weight bw delay\""));
  EXPECT_THAT(Error(kGraph, "DEMAND 2\nlabel src dest bw\nd0 0 1 5\nd1 2 0 0\n"),
              HasSubstr(DemandsAt(1) + "expected \"DEMANDS <count>\", got \"DEMAND 2\""));
}

TEST_F(RepetitaBadInputTest, LinkToUnknownNode) {
  EXPECT_THAT(Error(WithLine(kGraph, 11, "e2 1 7 10 1000000 100")),
              HasSubstr(At(11) + "dest: node 7 is out of range (NODES 3: 0..2)"));
  EXPECT_THAT(Error(kGraph, WithLine(kDemands, 3, "d0 3 1 5000")),
              HasSubstr(DemandsAt(3) + "src: node 3 is out of range (NODES 3: 0..2)"));
}

TEST_F(RepetitaBadInputTest, NegativeOrZeroCapacity) {
  EXPECT_THAT(Error(WithLine(kGraph, 10, "e1 1 0 10 -1000000 100")),
              HasSubstr(At(10) + "bw: capacity must be positive, got -1000000"));
  EXPECT_THAT(Error(WithLine(kGraph, 10, "e1 1 0 10 0 100")),
              HasSubstr(At(10) + "bw: capacity must be positive, got 0"));
  EXPECT_THAT(Error(WithLine(kGraph, 10, "e1 1 0 0 1000000 100")),
              HasSubstr(At(10) + "weight: 0 is out of range [1, 16777215]"));
  EXPECT_THAT(Error(kGraph, WithLine(kDemands, 4, "d1 2 0 -3")),
              HasSubstr(DemandsAt(4) + "bw: -3 kbit/s is out of range"));
}

TEST_F(RepetitaBadInputTest, DuplicateLabels) {
  EXPECT_THAT(Error(WithLine(kGraph, 4, "a -87.6 41.8")),
              HasSubstr(At(4) + "duplicate node label \"a\" (first at line 3)"));
  EXPECT_THAT(Error(WithLine(kGraph, 12, "e0 2 1 10 1000000 100")),
              HasSubstr(At(12) + "duplicate edge label \"e0\" (first at line 9)"));
  EXPECT_THAT(Error(kGraph, WithLine(kDemands, 4, "d0 2 0 1")),
              HasSubstr(DemandsAt(4) + "duplicate demand label \"d0\" (first at line 3)"));
}

TEST_F(RepetitaBadInputTest, ASelfLoopEdgeIsSkippedWithOneWarningNamingItsLine) {
  // As Interoute has them (edge_98 17 17 ...): a node joined to itself.
  std::string graph = WithLine(kGraph, 7, "EDGES 6");
  graph += "e4 2 2 10 1000000 353\n"   // 13
           "e5 2 2 10 1000000 353\n";  // 14
  graph_path_ = dir_.Write("net.graph", graph);
  std::vector<std::string> warnings;
  auto topology = LoadRepetita(graph_path_, dir_.Write("net.0000.demands", kDemands), &warnings);
  ASSERT_TRUE(topology.ok()) << topology.status();
  EXPECT_EQ(topology->links.size(), 4u);
  for (const auto& link : topology->links) EXPECT_NE(link.src_facility_id(), link.dst_facility_id());
  EXPECT_THAT(warnings, ::testing::ElementsAre(
                            At(13) + "self-loop edge e4 (node 2 to itself) skipped: it carries no traffic",
                            At(14) + "self-loop edge e5 (node 2 to itself) skipped: it carries no traffic"));
  // Without a place for warnings the import is the same.
  auto quiet = LoadRepetita(graph_path_, "");
  ASSERT_TRUE(quiet.ok()) << quiet.status();
  EXPECT_EQ(quiet->links.size(), 4u);
}

TEST_F(RepetitaBadInputTest, ABrokenSelfLoopIsStillAnError) {
  EXPECT_THAT(Error(WithLine(kGraph, 11, "e2 2 2 0 1000000 100")),
              HasSubstr(At(11) + "weight: 0 is out of range"));
  EXPECT_THAT(Error(WithLine(kGraph, 11, "e0 2 2 10 1000000 100")),
              HasSubstr(At(11) + "duplicate edge label \"e0\""));
}

TEST_F(RepetitaBadInputTest, ParallelEdgesAreKeptAsParallelCircuits) {
  std::string graph = WithLine(kGraph, 7, "EDGES 5");
  graph += "e4 0 1 20 400000 100\n";  // a second a -> b circuit, as Interoute's edge_50 / edge_52
  std::vector<std::string> warnings;
  auto topology = LoadRepetita(dir_.Write("net.graph", graph), "", &warnings);
  ASSERT_TRUE(topology.ok()) << topology.status();
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(topology->links.size(), 5u);
  const v1::Link& first = topology->links[0];
  const v1::Link& second = topology->links[4];
  EXPECT_EQ(first.src_facility_id(), second.src_facility_id());
  EXPECT_EQ(first.dst_facility_id(), second.dst_facility_id());
  EXPECT_NE(first.id(), second.id());
  EXPECT_DOUBLE_EQ(first.capacity_gbps() + second.capacity_gbps(), 1.4);
  EXPECT_EQ(second.igp_metric(), 20u);
}

TEST_F(RepetitaBadInputTest, ADemandToItselfIsRefused) {
  EXPECT_THAT(Error(kGraph, WithLine(kDemands, 3, "d0 1 1 5000")),
              HasSubstr(DemandsAt(3) + "demand d0 goes from node 1 to itself"));
}

TEST_F(RepetitaBadInputTest, NonNumericFieldsAndWrongFieldCounts) {
  EXPECT_THAT(Error(WithLine(kGraph, 3, "a west 40.7")),
              HasSubstr(At(3) + "x: expected a number, got \"west\""));
  EXPECT_THAT(Error(WithLine(kGraph, 4, "b -87.6 95")),
              HasSubstr(At(4) + "y: 95 is out of range [-90, 90]"));
  EXPECT_THAT(Error(WithLine(kGraph, 9, "e0 0 1 ten 1000000 100")),
              HasSubstr(At(9) + "weight: expected an integer metric >= 1, got \"ten\""));
  EXPECT_THAT(Error(WithLine(kGraph, 9, "e0 0 1 10 1000000 soon")),
              HasSubstr(At(9) + "delay: expected a number, got \"soon\""));
  EXPECT_THAT(Error(WithLine(kGraph, 9, "e0 0 one 10 1000000 100")),
              HasSubstr(At(9) + "dest: expected a node index, got \"one\""));
  EXPECT_THAT(Error(WithLine(kGraph, 9, "e0 0 1 10 1000000")),
              HasSubstr(At(9) + "wrong field count: expected 6 (label src dest weight bw delay), got 5"));
  EXPECT_THAT(Error(kGraph, WithLine(kDemands, 3, "d0 0 1 5000 7")),
              HasSubstr(DemandsAt(3) + "wrong field count: expected 4 (label src dest bw), got 5"));
}

TEST_F(RepetitaBadInputTest, EveryProblemOfASectionIsListed) {
  std::string graph = WithLine(kGraph, 9, "e0 0 1 10 -5 100");
  graph = WithLine(graph, 11, "e2 1 9 10 1000000 100");
  const std::string message = Error(graph);
  EXPECT_THAT(message, HasSubstr(At(9) + "bw: capacity must be positive"));
  EXPECT_THAT(message, HasSubstr(At(11) + "dest: node 9 is out of range"));
}

TEST(RepetitaTest, MissingFilesAreNotFound) {
  EXPECT_EQ(LoadRepetita("/nonexistent/x.graph", "").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(LoadRepetita(GraphPath("Abilene"), "/nonexistent/x.demands").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace geodesic::topology
