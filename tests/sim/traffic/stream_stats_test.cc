// What a receiver counts per stream, on synthetic sequences: loss bursts,
// reordering, duplicates, late packets, the wrap of the bins, and the first
// delivery after a failure.
#include "sim/traffic/stream_stats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace geodesic::traffic {
namespace {

constexpr int64_t kStartNs = 1'000'000'000'000;  // bin 1'000'000
constexpr int64_t kStartBin = 1'000'000;
constexpr int64_t kIntervalNs = 100'000;          // ten packets per 1 ms bin
constexpr int64_t kDelayNs = 1'000'000;

StreamPacket Packet(uint64_t sequence, int64_t interval_ns = kIntervalNs) {
  return StreamPacket{.stream_id = 1,
                      .sequence = sequence,
                      .send_time_ns = kStartNs + static_cast<int64_t>(sequence) * interval_ns,
                      .interval_ns = static_cast<uint32_t>(interval_ns),
                      .size_bytes = 1000};
}

// Sends `sequences` in the order given, each arriving kDelayNs after it was sent.
void Deliver(StreamStats& stats, const std::vector<uint64_t>& sequences) {
  for (uint64_t sequence : sequences) {
    const StreamPacket packet = Packet(sequence);
    stats.Record(packet, packet.send_time_ns + kDelayNs);
  }
}

std::vector<uint64_t> Range(uint64_t first, uint64_t last) {
  std::vector<uint64_t> out;
  for (uint64_t s = first; s <= last; ++s) out.push_back(s);
  return out;
}

TEST(StreamStatsTest, AnInOrderStreamLosesNothing) {
  StreamStats stats(1);
  Deliver(stats, Range(0, 99));
  const StreamSummary summary = stats.Summary();
  EXPECT_EQ(summary.first_sequence, 0u);
  EXPECT_EQ(summary.highest_sequence, 99u);
  EXPECT_EQ(summary.received, 100u);
  EXPECT_EQ(summary.received_bytes, 100'000u);
  EXPECT_EQ(summary.lost, 0u);
  EXPECT_EQ(summary.reordered + summary.duplicates + summary.late, 0u);
  EXPECT_FALSE(summary.longest_gap.has_value());
  EXPECT_EQ(summary.max_one_way_delay_ns, kDelayNs);
  const std::vector<StreamBin> bins = stats.Bins();
  ASSERT_EQ(bins.size(), 10u);
  EXPECT_EQ(bins.front().start_ms, kStartBin);
  for (const StreamBin& bin : bins) {
    EXPECT_EQ(bin.received, 10u);
    EXPECT_EQ(bin.lost, 0u);
  }
}

TEST(StreamStatsTest, TheLongestLossBurstIsTheOutage) {
  StreamStats stats(1);
  std::vector<uint64_t> sent = Range(0, 19);    // 20..49 lost: 30 packets, 3 ms
  for (uint64_t s : Range(50, 69)) sent.push_back(s);  // 70..74 lost: 5 packets
  for (uint64_t s : Range(75, 99)) sent.push_back(s);
  Deliver(stats, sent);
  const StreamSummary summary = stats.Summary();
  EXPECT_EQ(summary.received, 65u);
  EXPECT_EQ(summary.lost, 35u);
  ASSERT_TRUE(summary.longest_gap.has_value());
  const StreamGap& gap = *summary.longest_gap;
  EXPECT_EQ(gap.first_missing, 20u);
  EXPECT_EQ(gap.last_missing, 49u);
  EXPECT_EQ(gap.packets, 30u);
  EXPECT_DOUBLE_EQ(gap.ms, 3.0);
  // From the arrival of 19 to the arrival of 50: 31 intervals.
  EXPECT_DOUBLE_EQ(gap.wall_ms, 3.1);
  EXPECT_EQ(gap.before.sequence, 19u);
  EXPECT_EQ(gap.after.sequence, 50u);

  // Lost packets fall in the bins of their (interpolated) send times.
  const std::vector<StreamBin> bins = stats.Bins();
  ASSERT_EQ(bins.size(), 10u);
  const std::vector<uint64_t> lost_per_bin = {0, 0, 10, 10, 10, 0, 0, 5, 0, 0};
  const std::vector<uint64_t> received_per_bin = {10, 10, 0, 0, 0, 10, 10, 5, 10, 10};
  for (size_t i = 0; i < bins.size(); ++i) {
    EXPECT_EQ(bins[i].start_ms, kStartBin + static_cast<int64_t>(i));
    EXPECT_EQ(bins[i].lost, lost_per_bin[i]) << "bin " << i;
    EXPECT_EQ(bins[i].received, received_per_bin[i]) << "bin " << i;
  }
}

TEST(StreamStatsTest, GapsListsEveryOpenGapInSequenceOrder) {
  StreamStats stats(1);
  Deliver(stats, {0, 4, 5, 9, 2});  // 2 splits 1..3
  const std::vector<StreamGap> gaps = stats.Gaps();
  ASSERT_EQ(gaps.size(), 3u);
  EXPECT_EQ(gaps[0].first_missing, 1u);
  EXPECT_EQ(gaps[0].last_missing, 1u);
  EXPECT_EQ(gaps[1].first_missing, 3u);
  EXPECT_EQ(gaps[1].before.sequence, 2u);
  EXPECT_EQ(gaps[1].after.sequence, 4u);
  EXPECT_EQ(gaps[2].first_missing, 6u);
  EXPECT_EQ(gaps[2].packets, 3u);
}

TEST(StreamStatsTest, AReorderedPacketFillsItsGapAndIsCountedReordered) {
  StreamStats stats(1);
  Deliver(stats, {0, 1, 3, 4, 2, 5});
  const StreamSummary summary = stats.Summary();
  EXPECT_EQ(summary.received, 6u);
  EXPECT_EQ(summary.lost, 0u);
  EXPECT_EQ(summary.reordered, 1u);
  EXPECT_FALSE(summary.longest_gap.has_value());
}

TEST(StreamStatsTest, AReorderedPacketInsideAGapSplitsIt) {
  StreamStats stats(1);
  Deliver(stats, {0, 10, 3});  // gaps 1..2 and 4..9
  const StreamSummary summary = stats.Summary();
  EXPECT_EQ(summary.lost, 8u);
  EXPECT_EQ(summary.reordered, 1u);
  ASSERT_TRUE(summary.longest_gap.has_value());
  EXPECT_EQ(summary.longest_gap->first_missing, 4u);
  EXPECT_EQ(summary.longest_gap->last_missing, 9u);
  EXPECT_EQ(summary.longest_gap->before.sequence, 3u);
  EXPECT_EQ(summary.longest_gap->after.sequence, 10u);
  // Every packet has the same delay: the wall gap is the send-time gap of 3 and 10.
  EXPECT_DOUBLE_EQ(summary.longest_gap->wall_ms, 0.7);
  const std::vector<StreamBin> bins = stats.Bins();
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_EQ(bins[0].lost, 8u);
  EXPECT_EQ(bins[0].reordered, 1u);
}

TEST(StreamStatsTest, APacketBelowTheFirstSeenOpensAGapBelow) {
  StreamStats stats(1);
  Deliver(stats, {5, 6, 2});
  const StreamSummary summary = stats.Summary();
  EXPECT_EQ(summary.first_sequence, 2u);
  EXPECT_EQ(summary.highest_sequence, 6u);
  EXPECT_EQ(summary.lost, 2u);  // 3 and 4
  EXPECT_EQ(summary.reordered, 1u);
  ASSERT_TRUE(summary.longest_gap.has_value());
  EXPECT_EQ(summary.longest_gap->first_missing, 3u);
  EXPECT_EQ(summary.longest_gap->after.sequence, 5u);
}

TEST(StreamStatsTest, DuplicatesAreCountedApartFromReceived) {
  StreamStats stats(1);
  Deliver(stats, {0, 1, 1, 2, 0, 4, 4});
  const StreamSummary summary = stats.Summary();
  EXPECT_EQ(summary.received, 4u);
  EXPECT_EQ(summary.duplicates, 3u);
  EXPECT_EQ(summary.reordered, 0u);
  EXPECT_EQ(summary.lost, 1u);  // 3
  EXPECT_EQ(stats.Bins()[0].duplicates, 3u);
}

TEST(StreamStatsTest, LateIsOneWayDelayOverTheBound) {
  StreamStats stats(1, {.late_after_ns = 5'000'000});
  const StreamPacket on_time = Packet(0);
  const StreamPacket late = Packet(1);
  const StreamPacket at_bound = Packet(2);
  stats.Record(on_time, on_time.send_time_ns + 1'000'000);
  stats.Record(late, late.send_time_ns + 6'000'000);
  stats.Record(at_bound, at_bound.send_time_ns + 5'000'000);
  const StreamSummary summary = stats.Summary();
  EXPECT_EQ(summary.late, 1u);
  EXPECT_EQ(summary.max_one_way_delay_ns, 6'000'000);
  EXPECT_EQ(stats.Bins()[0].late, 1u);
}

TEST(StreamStatsTest, BinsWrapKeepingTheNewestAndCountOlderArrivalsUnbinned) {
  StreamStats stats(1, {.bin_capacity = 4});
  // One packet per ms: bins 0..9 (relative to kStartBin); 2 is lost at first.
  for (uint64_t s : Range(0, 9)) {
    if (s == 2) continue;
    const StreamPacket packet = Packet(s, 1'000'000);
    stats.Record(packet, packet.send_time_ns + kDelayNs);
  }
  std::vector<StreamBin> bins = stats.Bins();
  ASSERT_EQ(bins.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(bins[i].start_ms, kStartBin + 6 + static_cast<int64_t>(i));
    EXPECT_EQ(bins[i].received, 1u);  // not added to the older bins sharing the slot
    EXPECT_EQ(bins[i].lost, 0u);      // the lost packet's bin is no longer kept
  }
  EXPECT_EQ(stats.Summary().lost, 1u);

  // 2 arrives after all: in the totals, but its bin is gone.
  const StreamPacket straggler = Packet(2, 1'000'000);
  stats.Record(straggler, straggler.send_time_ns + 50'000'000);
  const StreamSummary summary = stats.Summary();
  EXPECT_EQ(summary.lost, 0u);
  EXPECT_EQ(summary.reordered, 1u);
  EXPECT_EQ(summary.unbinned, 1u);
  EXPECT_EQ(stats.Bins().size(), 4u);
}

TEST(StreamStatsTest, AStraySequenceNumberOpensAHugeGapThatBinsInBoundedTime) {
  StreamStats stats(1);
  Deliver(stats, Range(0, 9));
  StreamPacket stray = Packet(uint64_t{1} << 62);
  stray.send_time_ns = kStartNs + 2'000'000;  // its own clock says 2 ms
  stats.Record(stray, stray.send_time_ns + kDelayNs);
  const std::vector<StreamBin> bins = stats.Bins();
  ASSERT_EQ(bins.size(), 3u);
  uint64_t lost = 0;
  for (const StreamBin& bin : bins) lost += bin.lost;
  EXPECT_EQ(lost, (uint64_t{1} << 62) - 10);
  EXPECT_EQ(stats.Summary().lost, (uint64_t{1} << 62) - 10);
}

TEST(StreamStatsTest, FirstDeliveredAfterAFailureIgnoresPacketsSentBeforeIt) {
  StreamStats stats(1);
  const int64_t failure_ns = kStartNs + 3'000'000;  // when 30 is sent
  // 0..28 on time; 29 (sent before the failure) is held in a queue and
  // arrives long after; 30..59 are lost; 60.. arrive on the new path.
  Deliver(stats, Range(0, 28));
  const StreamPacket held = Packet(29);
  stats.Record(held, kStartNs + 20'000'000);
  Deliver(stats, Range(60, 99));

  const std::optional<Delivery> first = stats.FirstDeliveredAfter(failure_ns);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->sequence, 60u);
  EXPECT_EQ(first->receive_time_ns - failure_ns, 3'000'000 + kDelayNs);
  EXPECT_FALSE(stats.FirstDeliveredAfter(kStartNs + 100'000'000).has_value());
  EXPECT_EQ(stats.Summary().longest_gap->packets, 30u);
}

TEST(StreamReceiverStatsTest, SeparatesStreamsAndCountsRejectedDatagrams) {
  StreamReceiverStats stats;
  std::vector<uint8_t> buffer(100);
  for (uint32_t stream : {7u, 9u}) {
    for (uint64_t sequence : {0u, 1u, 3u}) {
      ASSERT_TRUE(EncodeStreamPacket({.stream_id = stream, .sequence = sequence, .send_time_ns = kStartNs,
                                      .interval_ns = 1000, .size_bytes = 100},
                                     buffer)
                      .ok());
      stats.RecordDatagram(buffer, kStartNs + 1000);
    }
  }
  stats.RecordDatagram(std::span<const uint8_t>(buffer).first(10), kStartNs);
  stats.RecordDatagram(std::span<const uint8_t>(buffer).first(90), kStartNs);
  buffer[1] = 0;
  stats.RecordDatagram(buffer, kStartNs);

  ASSERT_EQ(stats.streams().size(), 2u);
  EXPECT_EQ(stats.streams().at(7).Summary().received, 3u);
  EXPECT_EQ(stats.streams().at(9).Summary().lost, 1u);
  EXPECT_EQ(stats.rejected(PacketRejection::kTooShort), 1u);
  EXPECT_EQ(stats.rejected(PacketRejection::kSizeMismatch), 1u);
  EXPECT_EQ(stats.rejected(PacketRejection::kBadMagic), 1u);
  EXPECT_EQ(stats.rejected_total(), 3u);
}

}  // namespace
}  // namespace geodesic::traffic
