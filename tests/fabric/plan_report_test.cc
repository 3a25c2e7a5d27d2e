#include "fabric/plan_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

namespace geodesic::fabric {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(PlanReportTest, CountsHaveThousandsSeparators) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1000), "1,000");
  EXPECT_EQ(FormatCount(65536), "65,536");
  EXPECT_EQ(FormatCount(1048576), "1,048,576");
}

TEST(PlanReportTest, TableShowsBothDesignsInAlignedColumns) {
  const std::string text = FormatPlanTable(*PlanTwoTier(64, 8, 8), *PlanThreeTier(64, 8, 8));
  const auto lines = Lines(text);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "radix 64, 8 planes, 8 NICs per GPU (1 per plane)");
  EXPECT_THAT(text, HasSubstr("two tiers"));
  const size_t column = lines[1].find("two tiers");
  ASSERT_NE(column, std::string::npos);
  bool saw_gpus = false, saw_super_spine = false;
  for (size_t i = 2; i < lines.size(); ++i) {
    // Every row's second column starts under the header's.
    ASSERT_GT(lines[i].size(), column) << lines[i];
    EXPECT_NE(lines[i][column], ' ') << lines[i];
    EXPECT_EQ(lines[i][column - 1], ' ') << lines[i];
    if (lines[i].rfind("GPUs reached", 0) == 0) {
      saw_gpus = true;
      EXPECT_THAT(lines[i], HasSubstr("2,048"));
      EXPECT_THAT(lines[i], HasSubstr("65,536"));
    }
    if (lines[i].rfind("super-spine switches per plane", 0) == 0) {
      saw_super_spine = true;
      EXPECT_EQ(lines[i].substr(column, 2), "- ");
      EXPECT_THAT(lines[i], HasSubstr("1,024"));
    }
  }
  EXPECT_TRUE(saw_gpus);
  EXPECT_TRUE(saw_super_spine);
}

TEST(PlanReportTest, ComparisonEndsWithAVerdict) {
  EXPECT_THAT(FormatComparison(*CompareTierVsPlanes(64, 8, 2000)),
              HasSubstr("fewer switches: two tiers (768 vs 5,120)\n"));
  EXPECT_THAT(FormatComparison(*CompareTierVsPlanes(64, 8, 10000)),
              HasSubstr("only three tiers reach the target: two tiers stop at 2,048 GPUs\n"));
  const std::string neither = FormatComparison(*CompareTierVsPlanes(64, 8, 100000));
  EXPECT_THAT(neither, HasSubstr("target 100,000 GPUs with radix 64 and 8 NICs per GPU"));
  EXPECT_THAT(neither, HasSubstr("no (most it can)"));
  EXPECT_THAT(neither, HasSubstr("neither reaches the target"));
}

}  // namespace
}  // namespace geodesic::fabric
