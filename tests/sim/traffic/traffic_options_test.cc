// geodesic-traffic's command line: every flag validated before a socket opens.
#include "sim/traffic/traffic_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace geodesic::traffic {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(const std::vector<std::string>& args) {
  absl::StatusOr<TrafficCommand> command = ParseTrafficCommand(args);
  EXPECT_FALSE(command.ok());
  return command.ok() ? "" : std::string(command.status().message());
}

std::vector<std::string> Send(std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"send", "--to", "127.0.0.1:9000", "--rate-mbps", "20", "--size", "1000",
                                   "--stream", "3", "--duration-s", "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(TrafficOptionsTest, ParsesASendAndItsInterval) {
  absl::StatusOr<TrafficCommand> command = ParseTrafficCommand(Send({"--bind=127.0.0.2"}));
  ASSERT_TRUE(command.ok()) << command.status();
  const auto& send = std::get<SendOptions>(*command);
  EXPECT_EQ(send.to.family, AF_INET);
  EXPECT_EQ(send.stream_id, 3u);
  EXPECT_EQ(send.interval_ns(), 400'000);  // 8000 bits at 20 Mbit/s
  EXPECT_TRUE(send.has_bind);
}

TEST(TrafficOptionsTest, FlowsShareTheRate) {
  absl::StatusOr<TrafficCommand> command = ParseTrafficCommand(Send({"--flows", "4"}));
  ASSERT_TRUE(command.ok()) << command.status();
  const auto& send = std::get<SendOptions>(*command);
  EXPECT_EQ(send.flows, 4u);
  EXPECT_EQ(send.interval_ns(), 400'000);
  EXPECT_EQ(send.flow_interval_ns(), 1'600'000);
  EXPECT_THAT(ErrorOf(Send({"--flows", "0"})), HasSubstr("--flows: expected 1..64"));
  EXPECT_THAT(ErrorOf(Send({"--flows", "65"})), HasSubstr("--flows: expected 1..64"));
  EXPECT_THAT(ErrorOf({"send", "--to", "127.0.0.1:9000", "--rate-mbps", "1", "--size", "100", "--stream",
                       "4294967295", "--duration-s", "1", "--flows", "2"}),
              HasSubstr("past 4294967295"));
}

TEST(TrafficOptionsTest, ParsesAnIpv6Receive) {
  absl::StatusOr<TrafficCommand> command = ParseTrafficCommand(
      {"receive", "--listen", "[::1]:9000", "--duration-s", "1.5", "--report", "r.json", "--late-ms", "20", "--bins",
       "--realtime-priority", "10"});
  ASSERT_TRUE(command.ok()) << command.status();
  const auto& receive = std::get<ReceiveOptions>(*command);
  EXPECT_EQ(receive.realtime_priority, 10);
  EXPECT_EQ(receive.listen.family, AF_INET6);
  EXPECT_DOUBLE_EQ(receive.duration_s, 1.5);
  EXPECT_DOUBLE_EQ(receive.late_ms, 20);
  EXPECT_TRUE(receive.bins);
}

TEST(TrafficOptionsTest, RefusesBadUsageNamingTheFlag) {
  EXPECT_THAT(ErrorOf({}), HasSubstr("no subcommand"));
  EXPECT_THAT(ErrorOf({"blast"}), HasSubstr("unknown subcommand"));
  EXPECT_THAT(ErrorOf(Send({"--colour", "red"})), HasSubstr("unknown flag --colour"));
  EXPECT_THAT(ErrorOf(Send({"--stream", "4"})), HasSubstr("--stream given twice"));
  EXPECT_THAT(ErrorOf({"send", "--to", "127.0.0.1:9000"}), HasSubstr("--rate-mbps is required"));
  EXPECT_THAT(ErrorOf(Send({"--bind"})), HasSubstr("--bind needs a value"));
  EXPECT_THAT(ErrorOf({"send", "--to", "localhost:9000", "--rate-mbps", "1", "--size", "100", "--stream", "1",
                       "--duration-s", "1"}),
              HasSubstr("--to: \"localhost:9000\""));
  EXPECT_THAT(ErrorOf({"send", "--to", "127.0.0.1:0", "--rate-mbps", "1", "--size", "100", "--stream", "1",
                       "--duration-s", "1"}),
              HasSubstr("1..65535"));
  EXPECT_THAT(ErrorOf({"send", "--to", "::1:9000", "--rate-mbps", "1", "--size", "100", "--stream", "1",
                       "--duration-s", "1"}),
              HasSubstr("[IPv6]:PORT"));
  EXPECT_THAT(ErrorOf({"send", "--to", "127.0.0.1:9", "--rate-mbps", "-1", "--size", "100", "--stream", "1",
                       "--duration-s", "1"}),
              HasSubstr("--rate-mbps"));
  EXPECT_THAT(ErrorOf({"send", "--to", "127.0.0.1:9", "--rate-mbps", "nan", "--size", "100", "--stream", "1",
                       "--duration-s", "1"}),
              HasSubstr("--rate-mbps"));
  for (const char* size : {"31", "9001", "1e3", ""}) {
    EXPECT_THAT(ErrorOf({"send", "--to", "127.0.0.1:9", "--rate-mbps", "1", "--size", size, "--stream", "1",
                         "--duration-s", "1"}),
                HasSubstr("--size: expected bytes within 32..9000"));
  }
  EXPECT_THAT(ErrorOf(Send({"--bind", "::1"})), HasSubstr("address family"));
  EXPECT_THAT(ErrorOf({"receive", "--listen", "127.0.0.1:9", "--duration-s", "0", "--report", "r"}),
              HasSubstr("--duration-s"));
  EXPECT_THAT(ErrorOf({"receive", "--listen", "127.0.0.1:9", "--duration-s", "1", "--report", "r",
                       "--outage-min-ms", "-1"}),
              HasSubstr("--outage-min-ms"));
  for (const char* priority : {"100", "-1", "x"}) {
    EXPECT_THAT(ErrorOf({"receive", "--listen", "127.0.0.1:9", "--duration-s", "1", "--report", "r",
                         "--realtime-priority", priority}),
                HasSubstr("--realtime-priority: expected 0..99"));
  }
  EXPECT_THAT(ErrorOf({"receive", "--listen", "127.0.0.1:9", "--duration-s", "1", "--report", "r", "--bins=yes"}),
              HasSubstr("--bins takes no value"));
  EXPECT_THAT(ErrorOf({"receive", "--listen", "127.0.0.1:9", "--duration-s", "1", "--report", "r", "stray"}),
              HasSubstr("unexpected argument"));
}

TEST(TrafficOptionsTest, RefusesARateTooLowForAnIntervalOfFourSeconds) {
  EXPECT_THAT(ErrorOf({"send", "--to", "127.0.0.1:9", "--rate-mbps", "0.00001", "--size", "100", "--stream", "1",
                       "--duration-s", "1"}),
              HasSubstr("must be within 1 ns..4.29 s"));
}

}  // namespace
}  // namespace geodesic::traffic
