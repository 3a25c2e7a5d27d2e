// The pacing schedule: due times come from the start (no drift), a late
// sender catches up, a stalled one gives slots up instead of bursting.
#include "sim/traffic/pacing_schedule.h"

#include <gtest/gtest.h>

namespace geodesic::traffic {
namespace {

TEST(PacingScheduleTest, DueTimesComeFromTheStartNotFromTheLastSend) {
  PacingSchedule schedule(1'000, 100, 1'000);
  EXPECT_EQ(schedule.next_due_ns(), 1'000);
  // Every send 30 ns late: the next one is still due on the grid.
  for (int n = 0; n < 10; ++n) {
    schedule.Take(schedule.next_due_ns() + 30);
    EXPECT_EQ(schedule.next_due_ns(), 1'000 + (n + 1) * 100);
  }
  EXPECT_EQ(schedule.packets_taken(), 10u);
  EXPECT_EQ(schedule.skipped_slots(), 0u);
}

TEST(PacingScheduleTest, CatchesUpWithinTheMaximumLag) {
  PacingSchedule schedule(0, 100, 1'000);
  // Woken 950 ns late: ten packets are due at once and all are sent.
  int sent = 0;
  while (schedule.next_due_ns() <= 950) {
    schedule.Take(950);
    ++sent;
  }
  EXPECT_EQ(sent, 10);
  EXPECT_EQ(schedule.skipped_slots(), 0u);
  EXPECT_EQ(schedule.next_due_ns(), 1'000);
}

TEST(PacingScheduleTest, AStallBeyondTheMaximumLagSkipsSlotsInsteadOfBursting) {
  PacingSchedule schedule(0, 100, 1'000);
  schedule.Take(0);
  // Stopped until 10'050: slots 1..100 are given up, this packet takes slot 100.
  schedule.Take(10'050);
  EXPECT_EQ(schedule.skipped_slots(), 99u);
  EXPECT_EQ(schedule.packets_taken(), 2u);
  EXPECT_EQ(schedule.next_due_ns(), 10'100);
}

}  // namespace
}  // namespace geodesic::traffic
