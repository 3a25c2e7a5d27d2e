#include "state/kind.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace geodesic::state {
namespace {

// Names are column families and journal content: they must be complete,
// distinct and stable.
TEST(KindTest, EveryKindHasADistinctNameThatRoundTrips) {
  std::set<std::string> names;
  for (size_t i = 0; i < kAllKinds.size(); ++i) {
    const Kind kind = kAllKinds[i];
    EXPECT_EQ(static_cast<size_t>(kind), i) << "kAllKinds must list the kinds in enum order";
    const std::string name(KindName(kind));
    EXPECT_FALSE(name.empty());
    EXPECT_NE(name, "journal");  // the journal's column family
    EXPECT_NE(name, "default");  // RocksDB's default column family
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(KindFromName(name), kind);
  }
  EXPECT_EQ(KindName(static_cast<Kind>(kAllKinds.size())), "");
  EXPECT_EQ(KindFromName("links"), std::nullopt);
  EXPECT_EQ(KindName(Kind::kAgentSession), "agent_session");
  EXPECT_EQ(EntityKey(Kind::kLink, "iad-ord-1"), "link/iad-ord-1");
}

}  // namespace
}  // namespace geodesic::state
