// `tectl solve`: the real binary on REPETITA files; its JSON is enough to
// check the allocation, and bad input is refused with a clear error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "tests/cli/tectl_testing.h"
#include "topology/repetita.h"
#include "yaml-cpp/yaml.h"

namespace geodesic::cli {
namespace {

using ::testing::HasSubstr;
using namespace tectl_testing;  // NOLINT: the shared helpers of these tests

YAML::Node SolveJson(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"solve", "--graph", RepetitaDir() + "/Abilene.graph", "-o", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const TectlRun run = Tectl(args);
  EXPECT_EQ(run.exit_code, 0) << run;
  return YAML::Load(run.out);
}

TEST(TectlSolveTest, JsonCarriesWhatItTakesToCheckTheAllocation) {
  const YAML::Node result = SolveJson({});
  for (const char* key : {"objective", "mlu", "total_demand", "routed", "solve_ms", "links"}) {
    EXPECT_TRUE(result[key].IsDefined()) << key;
  }
  EXPECT_EQ(result["objective"].as<std::string>(), "mlu");
  // Every demand of the file is routed under the MLU objective.
  auto abilene = topology::LoadRepetita(RepetitaDir() + "/Abilene.graph",
                                        RepetitaDir() + "/Abilene.0000.demands");
  ASSERT_TRUE(abilene.ok()) << abilene.status();
  double demand = 0;
  for (const auto& workload : abilene->workloads) demand += workload.elephant().demand_gbps();
  EXPECT_NEAR(result["total_demand"].as<double>(), demand, 1e-6 * demand);
  EXPECT_NEAR(result["routed"].as<double>(), demand, 1e-6 * demand);
  // One entry per link of the file; the MLU is the largest load / capacity.
  ASSERT_EQ(result["links"].size(), abilene->links.size());
  double mlu = 0;
  for (const auto& link : result["links"]) {
    ASSERT_GT(link["capacity"].as<double>(), 0);
    EXPECT_GE(link["load"].as<double>(), 0);
    mlu = std::max(mlu, link["load"].as<double>() / link["capacity"].as<double>());
  }
  EXPECT_NEAR(result["mlu"].as<double>(), mlu, 1e-4);
  EXPECT_LE(result["mlu_lower_bound"].as<double>(), result["mlu"].as<double>() + 1e-9);
}

TEST(TectlSolveTest, ScaleAndObjectiveChangeTheProblem) {
  const YAML::Node base = SolveJson({});
  const YAML::Node doubled = SolveJson({"--scale", "2"});
  EXPECT_NEAR(doubled["total_demand"].as<double>(), 2 * base["total_demand"].as<double>(), 1e-6);
  EXPECT_NEAR(doubled["mlu"].as<double>(), 2 * base["mlu"].as<double>(), 1e-3);
  // Three times the demand does not fit (MLU 0.9 at scale 1): the total-flow
  // objective carries less than asked and never overloads a link.
  const YAML::Node packed = SolveJson({"--scale", "3", "--objective", "total-flow"});
  EXPECT_EQ(packed["objective"].as<std::string>(), "total-flow");
  EXPECT_LT(packed["routed"].as<double>(), packed["total_demand"].as<double>());
  EXPECT_LE(packed["mlu"].as<double>(), 1 + 1e-6);
}

TEST(TectlSolveTest, BadInputIsRefusedClearly) {
  TempDir scratch{"tectl"};
  const std::string bad = scratch.path() + "/bad.graph";
  std::ofstream(bad) << "NODES 2\nlabel x y\na 0 0\nb 1 1\n\nEDGES 1\nlabel src dest weight bw delay\n"
                        "e0 0 5 1 100 1\n";
  TectlRun run = Tectl({"solve", "--graph", bad});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("bad.graph:8:"));

  run = Tectl({"solve", "--graph", scratch.path() + "/missing.graph"});
  EXPECT_EQ(run.exit_code, 1) << run;
  run = Tectl({"solve", "--graph", Backbone(), "--demands", RepetitaDir() + "/Abilene.0000.demands"});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("--demands goes with a REPETITA .graph"));
  // Demands of another network: node indices out of range.
  run = Tectl({"solve", "--graph", RepetitaDir() + "/Abilene.graph", "--demands",
               RepetitaDir() + "/Cogentco.0000.demands"});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("Cogentco.0000.demands:"));

  for (const std::vector<std::string>& usage :
       {std::vector<std::string>{"solve"},
        {"solve", "--graph", bad, "--scale", "-1"},
        {"solve", "--graph", bad, "--scale", "lots"},
        {"solve", "--graph", bad, "--objective", "fastest"},
        {"solve", "--graph", bad, "--server", "127.0.0.1:1"},
        {"solve", "--graph", bad, "-o", "xml"}}) {
    run = Tectl(usage);
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_THAT(run.err, HasSubstr("usage:")) << run;
  }
}

}  // namespace
}  // namespace geodesic::cli
