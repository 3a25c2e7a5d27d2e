#include "routerd/suspect_down.h"

#include <gtest/gtest.h>

namespace geodesic::routerd {
namespace {

using std::chrono::milliseconds;

const DownLinks kFacility = {"a", "b", "c", "d"};

class SuspectDownFilterTest : public ::testing::Test {
 protected:
  SuspectDownFilter::Clock::time_point At(int ms) const { return start_ + milliseconds(ms); }
  const SuspectDownFilter::Clock::time_point start_ = SuspectDownFilter::Clock::now();
};

TEST_F(SuspectDownFilterTest, OneLinkDownIsRepairedAtOnce) {
  SuspectDownFilter filter;
  const auto verdict = filter.Update({"a"}, kFacility, At(0));
  EXPECT_EQ(verdict.repair, DownLinks{"a"});
  EXPECT_TRUE(verdict.suspect.empty());
  EXPECT_FALSE(verdict.held_now);
  EXPECT_EQ(filter.suspect_reports(), 0u);
}

TEST_F(SuspectDownFilterTest, EveryLinkDownAtOnceIsHeld) {
  SuspectDownFilter filter;
  const auto verdict = filter.Update(kFacility, kFacility, At(0));
  EXPECT_TRUE(verdict.repair.empty());
  EXPECT_EQ(verdict.suspect, kFacility);
  EXPECT_TRUE(verdict.held_now);
  EXPECT_EQ(filter.suspect_reports(), 1u);
  // Repeating the same report is the same suspicion, not a new one.
  EXPECT_FALSE(filter.Update(kFacility, kFacility, At(50)).held_now);
  EXPECT_EQ(filter.suspect_reports(), 1u);
  // A link coming back leaves the hold; the others stay held.
  const auto partly = filter.Update({"b", "c", "d"}, kFacility, At(5000));
  EXPECT_TRUE(partly.repair.empty());
  EXPECT_EQ(partly.suspect, (DownLinks{"b", "c", "d"}));
}

TEST_F(SuspectDownFilterTest, TheBurstWindowAndShareDecide) {
  SuspectDownFilter filter({.share = 0.75, .window = milliseconds(500)});
  EXPECT_EQ(filter.Update({"a"}, kFacility, At(0)).repair, DownLinks{"a"});
  EXPECT_EQ(filter.Update({"a", "b"}, kFacility, At(100)).repair, (DownLinks{"a", "b"}));
  // The third within the window: 3 of 4 links, at least 0.75 of them.
  const auto burst = filter.Update({"a", "b", "c"}, kFacility, At(400));
  EXPECT_TRUE(burst.repair.empty());
  EXPECT_EQ(burst.suspect, (DownLinks{"a", "b", "c"}));
  EXPECT_TRUE(burst.held_now);
}

TEST_F(SuspectDownFilterTest, LinksFailingSlowlyAreRealCutsUntilTheLastOne) {
  SuspectDownFilter filter({.share = 0.75, .window = milliseconds(500)});
  EXPECT_EQ(filter.Update({"a"}, kFacility, At(0)).repair.size(), 1u);
  EXPECT_EQ(filter.Update({"a", "b"}, kFacility, At(1000)).repair.size(), 2u);
  EXPECT_EQ(filter.Update({"a", "b", "c"}, kFacility, At(2000)).repair.size(), 3u);
  const auto last = filter.Update(kFacility, kFacility, At(3000));
  EXPECT_EQ(last.repair, (DownLinks{"a", "b", "c"}));
  EXPECT_EQ(last.suspect, DownLinks{"d"});
}

TEST_F(SuspectDownFilterTest, ASingleLinkFacilityRepairsItsOneCut) {
  SuspectDownFilter filter;
  EXPECT_EQ(filter.Update({"a"}, {"a"}, At(0)).repair, DownLinks{"a"});
  EXPECT_EQ(filter.suspect_reports(), 0u);
}

TEST_F(SuspectDownFilterTest, TwoLinksKnownOnlyFromTheReportAreEveryLink) {
  SuspectDownFilter filter;
  // Known only from the report itself (no plan yet): two links, both down.
  EXPECT_TRUE(filter.Update({"a", "b"}, {}, At(0)).repair.empty());
}

}  // namespace
}  // namespace geodesic::routerd
