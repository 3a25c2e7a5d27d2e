#include "routerd/rib_diff.h"

#include <gtest/gtest.h>

namespace geodesic::routerd {
namespace {

v1::ForwardingRoute MakeRoute(const std::string& prefix, const std::string& link, uint32_t weight = 1) {
  v1::ForwardingRoute route;
  route.set_prefix(prefix);
  auto* hop = route.add_next_hops();
  hop->set_link_id(link);
  hop->set_weight(weight);
  return route;
}

TEST(RibDiffTest, ClassifiesAddedChangedRemovedAndUnchanged) {
  v1::ForwardingTable installed, next;
  *installed.add_routes() = MakeRoute("10.1.0.0/16", "a");
  *installed.add_routes() = MakeRoute("10.2.0.0/16", "a");
  *installed.add_routes() = MakeRoute("10.3.0.0/16", "a");
  *installed.add_routes() = MakeRoute("10.5.0.0/16", "a");
  *next.add_routes() = MakeRoute("10.1.0.0/16", "a");     // unchanged
  *next.add_routes() = MakeRoute("10.2.0.0/16", "b");     // new next hop
  *next.add_routes() = MakeRoute("10.3.0.0/16", "a", 2);  // new weight
  *next.add_routes() = MakeRoute("10.4.0.0/16", "a");     // added; 10.5 removed
  v1::ForwardingRoute other_path = MakeRoute("10.1.0.0/16", "a");
  other_path.add_path_facility_ids("x");
  other_path.set_path_latency_us(7);
  *next.mutable_routes(0) = other_path;  // the path's details alone do not re-announce

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
  v1::ForwardingRoute route = MakeRoute("p", "iad-nyc", 3);
  auto* hop = route.add_next_hops();
  hop->set_link_id("iad-chi");
  hop->set_weight(1);
  EXPECT_EQ(DescribeNextHops(route), "iad-nyc(w3),iad-chi(w1)");
  EXPECT_EQ(DescribeNextHops(v1::ForwardingRoute()), "none");
}

}  // namespace
}  // namespace geodesic::routerd
