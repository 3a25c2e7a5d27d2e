// daemon::StopAfter: its budget runs from the first time it is asked.
#include "daemon/clock.h"

#include <gtest/gtest.h>

namespace geodesic::daemon {
namespace {

TEST(StopAfterTest, ABudgetSpentAtOnceStopsAtTheFirstAsk) {
  auto stop = StopAfter(std::chrono::milliseconds(0));
  EXPECT_TRUE(stop());
  EXPECT_TRUE(stop());
}

TEST(StopAfterTest, ABudgetLeftDoesNotStop) {
  auto stop = StopAfter(std::chrono::hours(1));
  EXPECT_FALSE(stop());
  EXPECT_FALSE(stop());
  // Each stop keeps its own deadline.
  auto other = StopAfter(std::chrono::milliseconds(0));
  EXPECT_TRUE(other());
  EXPECT_FALSE(stop());
}

}  // namespace
}  // namespace geodesic::daemon
