// The JSON geodesic-traffic writes parses as JSON and says what the counts say;
// bins only when asked for.
#include "sim/traffic/traffic_report.h"

#include <gtest/gtest.h>

// property_tree's JSON parser includes the old boost/bind.hpp, which wants this.
#define BOOST_BIND_GLOBAL_PLACEHOLDERS
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <sstream>
#include <vector>

namespace geodesic::traffic {
namespace {

using Tree = boost::property_tree::ptree;

constexpr int64_t kStartNs = 1'000'000'000'000;

Tree Parse(const std::string& json) {
  std::istringstream in(json);
  Tree tree;
  boost::property_tree::read_json(in, tree);
  return tree;
}

// Stream 4: 0..9 every 100 us, 3..5 lost, arriving 1 ms later; one foreign datagram.
StreamReceiverStats LossyStream() {
  StreamReceiverStats stats;
  for (uint64_t sequence = 0; sequence < 10; ++sequence) {
    if (sequence >= 3 && sequence <= 5) continue;
    const int64_t send_ns = kStartNs + static_cast<int64_t>(sequence) * 100'000;
    stats.Record({.stream_id = 4, .sequence = sequence, .send_time_ns = send_ns, .interval_ns = 100'000,
                  .size_bytes = 1000},
                 send_ns + 1'000'000);
  }
  const std::vector<uint8_t> foreign(40, 'x');
  stats.RecordDatagram(foreign, kStartNs);
  return stats;
}

TEST(TrafficReportTest, ReceiverReportSaysTheCountsAndTheLongestGap) {
  const Tree report = Parse(FormatReceiverReport(LossyStream(), {.late_after_ms = 50, .duration_s = 2,
                                                                 .socket_drops = 3, .bins = false}));
  EXPECT_EQ(report.get<int>("socket_drops"), 3);
  EXPECT_EQ(report.get<int>("rejected.bad_magic"), 1);
  const Tree& stream = report.get_child("streams").begin()->second;
  EXPECT_EQ(stream.get<int>("stream"), 4);
  EXPECT_EQ(stream.get<int>("first_sequence"), 0);
  EXPECT_EQ(stream.get<int>("highest_sequence"), 9);
  EXPECT_EQ(stream.get<int>("received"), 7);
  EXPECT_EQ(stream.get<int>("lost"), 3);
  EXPECT_EQ(stream.get<int>("longest_gap_packets"), 3);
  EXPECT_DOUBLE_EQ(stream.get<double>("longest_gap_ms"), 0.3);
  EXPECT_DOUBLE_EQ(stream.get<double>("longest_gap_wall_ms"), 0.4);
  EXPECT_EQ(stream.get<int>("longest_gap.first_missing"), 3);
  EXPECT_EQ(stream.get<int>("longest_gap.last_missing"), 5);
  // 7 packets over 0.9 ms: 6 intervals' worth of 8000 bits.
  EXPECT_NEAR(stream.get<double>("rate_mbps"), 6 * 8000 / 0.9e-3 / 1e6, 0.01);
  EXPECT_EQ(stream.count("bins"), 0u);
}

TEST(TrafficReportTest, OutagesAreTheGapsOfAtLeastTheMinimumWithTheirBoundingPackets) {
  const Tree longer = Parse(FormatReceiverReport(LossyStream(), {.outage_min_ms = 0.3}));
  const Tree& outages = longer.get_child("streams").begin()->second.get_child("outages");
  ASSERT_EQ(outages.size(), 1u);
  const Tree& outage = outages.begin()->second;
  EXPECT_EQ(outage.get<int>("packets"), 3);
  EXPECT_EQ(outage.get<int>("last_before.sequence"), 2);
  EXPECT_EQ(outage.get<int64_t>("first_after.sequence"), 6);
  EXPECT_EQ(outage.get<int64_t>("first_after.send_ns"), kStartNs + 600'000);
  EXPECT_EQ(outage.get<int64_t>("first_after.receive_ns"), kStartNs + 1'600'000);

  const Tree shorter = Parse(FormatReceiverReport(LossyStream(), {.outage_min_ms = 0.31}));
  EXPECT_EQ(shorter.get_child("streams").begin()->second.get_child("outages").size(), 0u);
}

TEST(TrafficReportTest, BinsOnlyWhenAskedFor) {
  const Tree report = Parse(FormatReceiverReport(LossyStream(), {.late_after_ms = 50, .duration_s = 2,
                                                                 .socket_drops = 0, .bins = true}));
  const Tree& stream = report.get_child("streams").begin()->second;
  const Tree& bins = stream.get_child("bins");
  ASSERT_EQ(bins.size(), 1u);  // all in the first millisecond
  std::vector<int64_t> columns;
  for (const auto& [key, value] : bins.begin()->second) columns.push_back(value.get_value<int64_t>());
  EXPECT_EQ(columns, (std::vector<int64_t>{1'000'000, 7, 3, 0, 0, 0}));
}

TEST(TrafficReportTest, AStreamWithoutLossHasANullGap) {
  StreamReceiverStats stats;
  stats.Record({.stream_id = 1, .sequence = 0, .send_time_ns = kStartNs, .interval_ns = 1000, .size_bytes = 100},
               kStartNs);
  const Tree report = Parse(FormatReceiverReport(stats, {}));
  const Tree& stream = report.get_child("streams").begin()->second;
  EXPECT_EQ(stream.get<int>("longest_gap_packets"), 0);
  EXPECT_EQ(stream.get<std::string>("longest_gap"), "null");
}

TEST(TrafficReportTest, SendSummaryParses) {
  const Tree summary = Parse(FormatSendSummary({.stream_id = 2, .to = "[::1]:9000", .target_rate_mbps = 20,
                                                .size_bytes = 1000, .interval_ns = 400'000, .packets_sent = 5000,
                                                .send_errors = 1, .skipped_slots = 2, .duration_s = 2,
                                                .rate_mbps = 20}));
  EXPECT_EQ(summary.get<std::string>("to"), "[::1]:9000");
  EXPECT_EQ(summary.get<int>("packets_sent"), 5000);
  EXPECT_EQ(summary.get<int>("skipped_slots"), 2);
}

}  // namespace
}  // namespace geodesic::traffic
