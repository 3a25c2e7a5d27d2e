// A chain plan's path table: what AddChainPath writes, what ChainPathIds
// resolves, and the tables and hops ValidateChainPaths refuses.
#include "site_plan/chain_paths.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

namespace geodesic::site_plan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// rag: a retriever in chi over iad, then a model where the retriever is.
v1::ChainPlan Rag() {
  v1::ChainPlan chain;
  chain.set_workload_id("rag");
  v1::ChainHop& retriever = *chain.mutable_primary()->add_hops();
  retriever.set_service_id("retriever");
  retriever.set_path_there(AddChainPath(chain, {"nyc", "iad", "chi"}));
  retriever.set_path_back(AddChainPath(chain, {"chi", "iad", "nyc"}));
  v1::ChainHop& model = *chain.mutable_primary()->add_hops();
  model.set_service_id("model");
  model.set_path_there(AddChainPath(chain, {}));
  v1::ChainHop& detour = *chain.add_backups()->mutable_assignment()->add_hops();
  detour.set_service_id("retriever");
  detour.set_path_there(AddChainPath(chain, {"nyc", "chi"}));
  return chain;
}

TEST(ChainPaths, WrittenAndResolved) {
  const v1::ChainPlan chain = Rag();
  ASSERT_TRUE(ValidateChainPaths(chain).ok()) << ValidateChainPaths(chain);
  EXPECT_EQ(ChainPathCount(chain), 4);  // the empty path and three
  EXPECT_THAT(chain.path_facility_ids(), ElementsAre("nyc", "iad", "chi"));  // each id once
  const auto& hops = chain.primary().hops();
  EXPECT_THAT(ChainPathIds(chain, hops[0].path_there()), ElementsAre("nyc", "iad", "chi"));
  EXPECT_THAT(ChainPathIds(chain, hops[0].path_back()), ElementsAre("chi", "iad", "nyc"));
  EXPECT_EQ(hops[1].path_there(), 0u);  // an empty path is path 0
  EXPECT_THAT(ChainPathIds(chain, 0), IsEmpty());
  EXPECT_THAT(ChainPathIds(chain, chain.backups(0).assignment().hops(0).path_there()), ElementsAre("nyc", "chi"));
}

TEST(ChainPaths, AChainWithoutATableHasOnlyPathZero) {
  v1::ChainPlan chain;
  chain.mutable_primary()->add_hops()->set_service_id("model");
  EXPECT_TRUE(ValidateChainPaths(chain).ok());
  EXPECT_EQ(ChainPathCount(chain), 0);
  chain.mutable_primary()->mutable_hops(0)->set_path_back(1);
  EXPECT_THAT(ValidateChainPaths(chain).message(), HasSubstr("names path 1; the chain has 0"));
}

TEST(ChainPaths, MalformedTablesAndHopsAreRefusedByName) {
  struct Case {
    const char* name;
    std::function<void(v1::ChainPlan&)> spoil;
    const char* error;
  };
  const std::vector<Case> cases = {
      {"path 0 not empty", [](v1::ChainPlan& c) { c.set_path_ends(0, 1); }, "path 0 is not empty"},
      {"ends decrease", [](v1::ChainPlan& c) { c.set_path_ends(2, 1); }, "path_ends decreases at 2"},
      {"ends short", [](v1::ChainPlan& c) { c.add_path_facilities(0); },
       "path_ends ends at 8 but path_facilities has 9"},
      {"facility out of range", [](v1::ChainPlan& c) { c.set_path_facilities(1, 7); },
       "path_facilities[1] = 7 is not among its 3 facility ids"},
      {"primary hop", [](v1::ChainPlan& c) { c.mutable_primary()->mutable_hops(1)->set_path_back(4); },
       "primary hop 1 (service model) names path 4; the chain has 4"},
      {"backup hop",
       [](v1::ChainPlan& c) { c.mutable_backups(0)->mutable_assignment()->mutable_hops(0)->set_path_there(9); },
       "backup 0 hop 0 (service retriever) names path 9"},
  };
  for (const Case& test : cases) {
    v1::ChainPlan chain = Rag();
    test.spoil(chain);
    const absl::Status status = ValidateChainPaths(chain);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << test.name;
    EXPECT_THAT(status.message(), HasSubstr(test.error)) << test.name;
    EXPECT_THAT(status.message(), HasSubstr("chain rag: ")) << test.name;
  }
}

TEST(ChainPaths, ResolvingAnUnvalidatedTableNeverReadsOutside) {
  v1::ChainPlan chain = Rag();
  chain.set_path_facilities(0, 99);
  chain.set_path_ends(3, 50);
  EXPECT_THAT(ChainPathIds(chain, 1), IsEmpty());
  EXPECT_THAT(ChainPathIds(chain, 3), IsEmpty());
  EXPECT_THAT(ChainPathIds(chain, 12), IsEmpty());
}

}  // namespace
}  // namespace geodesic::site_plan
