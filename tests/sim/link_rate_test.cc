// Bytes a link's counters moved over an interval, in the model's units: what
// a test sets beside a plan's link loads (pure).
#include <gtest/gtest.h>

#include "sim/netns/link_counters.h"

namespace geodesic::sim {
namespace {

TEST(LinkRateTest, BytesOverAnIntervalAreMbitPerSecondModelGbpsAndUtilization) {
  // 2.5 MB in 2 s: 10 Mbit/s; at 1 Mbit/s per Gbps, 10 Gbps of a 40 Gbps link.
  absl::StatusOr<LinkRate> rate = RateOverInterval(2'500'000, 2.0, 1.0, 40);
  ASSERT_TRUE(rate.ok()) << rate.status();
  EXPECT_DOUBLE_EQ(rate->mbit_per_s, 10);
  EXPECT_DOUBLE_EQ(rate->model_gbps, 10);
  EXPECT_DOUBLE_EQ(rate->utilization, 0.25);
  // At 0.1 Mbit/s per Gbps the same 10 Mbit/s stand for 100 Gbps.
  EXPECT_DOUBLE_EQ(RateOverInterval(2'500'000, 2.0, 0.1, 400)->model_gbps, 100);
}

TEST(LinkRateTest, RefusesAnEmptyIntervalOrScale) {
  EXPECT_EQ(RateOverInterval(1, 0, 1, 10).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RateOverInterval(1, 1, 0, 10).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RateOverInterval(1, 1, 1, -1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RateOverInterval(1, 1, 1, 0)->utilization, 0);
}

}  // namespace
}  // namespace geodesic::sim
