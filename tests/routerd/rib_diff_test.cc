#include "routerd/rib_diff.h"

#include <gtest/gtest.h>

namespace geodesic::routerd {
namespace {

v1::Route MakeRoute(const std::string& prefix, const std::string& link, uint32_t weight = 1) {
  v1::Route route;
  route.set_prefix(prefix);
  auto* hop = route.add_next_hops();
  hop->set_link_id(link);
  hop->set_weight(weight);
  return route;
}

TEST(RibDiffTest, ClassifiesAddedChangedRemovedAndUnchanged) {
  v1::SitePlan installed, next;
  *installed.add_routes() = MakeRoute("10.1.0.0/16", "a");
  *installed.add_routes() = MakeRoute("10.2.0.0/16", "a");
  *installed.add_routes() = MakeRoute("10.3.0.0/16", "a");
  *installed.add_routes() = MakeRoute("10.5.0.0/16", "a");
  *next.add_routes() = MakeRoute("10.1.0.0/16", "a");     // unchanged
  *next.add_routes() = MakeRoute("10.2.0.0/16", "b");     // new next hop
  *next.add_routes() = MakeRoute("10.3.0.0/16", "a", 2);  // new weight
  *next.add_routes() = MakeRoute("10.4.0.0/16", "a");     // added; 10.5 removed
  v1::Route with_backup = MakeRoute("10.1.0.0/16", "a");
  with_backup.add_backups()->mutable_protects()->set_id("x");
  *next.mutable_routes(0) = with_backup;  // backups alone do not re-announce

  const RibDiff diff = DiffRoutes(installed, next);
  ASSERT_EQ(diff.added.size(), 1u);
  EXPECT_EQ(diff.added[0].prefix(), "10.4.0.0/16");
  ASSERT_EQ(diff.changed.size(), 2u);
  EXPECT_EQ(diff.changed[0].before.next_hops(0).link_id(), "a");
  EXPECT_EQ(diff.changed[0].after.next_hops(0).link_id(), "b");
  EXPECT_EQ(diff.changed[1].after.prefix(), "10.3.0.0/16");
  ASSERT_EQ(diff.removed.size(), 1u);
  EXPECT_EQ(diff.removed[0].prefix(), "10.5.0.0/16");
  EXPECT_TRUE(DiffRoutes(next, next).empty());
}

TEST(RibDiffTest, DescribesNextHops) {
  v1::Route route = MakeRoute("p", "iad-nyc", 3);
  auto* hop = route.add_next_hops();
  hop->set_link_id("iad-chi");
  hop->set_weight(1);
  EXPECT_EQ(DescribeNextHops(route), "iad-nyc(w3),iad-chi(w1)");
  EXPECT_EQ(DescribeNextHops(v1::Route()), "none");
}

}  // namespace
}  // namespace geodesic::routerd
