#pragma once
// The command line of geodesic-traffic, parsed and validated in full before
// anything opens a socket:
//
//   geodesic-traffic send --to IP:PORT --rate-mbps R --size BYTES --stream ID
//                         --duration-s S [--flows N] [--bind IP] [--report FILE]
//   geodesic-traffic receive --listen IP:PORT --duration-s S --report FILE
//                            [--late-ms L] [--outage-min-ms M] [--bins] [--rcvbuf-bytes N]
//                            [--realtime-priority P]
//
// IPv6 addresses in brackets with a port ("[::1]:9000"), bare for --bind.
// `--flag=VALUE` is the same as `--flag VALUE`. Pure: no I/O (addresses are
// parsed with inet_pton, no name lookup). Thread-safe.
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"

namespace geodesic::traffic {

inline constexpr const char* kTrafficUsage =
    "usage: geodesic-traffic send --to IP:PORT --rate-mbps R --size BYTES --stream ID --duration-s S\n"
    "                             [--flows N] [--bind IP] [--report FILE]\n"
    "       geodesic-traffic receive --listen IP:PORT --duration-s S --report FILE\n"
    "                                [--late-ms L] [--outage-min-ms M] [--bins] [--rcvbuf-bytes N]\n"
    "                                [--realtime-priority P]\n"
    "  send      paces UDP packets of BYTES (the UDP payload, 32..9000), sequence numbered\n"
    "            and timestamped, to IP:PORT at R Mbit/s of payload for S seconds; prints a\n"
    "            JSON summary (and writes it to FILE); --flows N splits it into N flows\n"
    "            of R/N each (streams ID..ID+N-1, each from its own source port, so\n"
    "            multipath hashing spreads them as it spreads many connections) [1]\n"
    "  receive   counts every stream arriving at IP:PORT (received, lost, reordered,\n"
    "            duplicates, late over L ms [50], the longest gap) and writes a JSON report\n"
    "            to FILE after S seconds or on SIGTERM, listing every gap of M ms [1] or\n"
    "            more as an outage; --bins adds the per-1 ms bins;\n"
    "            --rcvbuf-bytes sets the socket's receive buffer [4194304]; SIGUSR1\n"
    "            writes the report so far and goes on; --realtime-priority P (1..99) runs it\n"
    "            SCHED_FIFO where permitted, so that a busy host does not overflow its socket [0]\n"
    "  IPv6: [addr]:port. Exit codes: 0 ok, 1 a socket or file error, 2 bad usage.\n";

// An IPv4 or IPv6 socket address.
struct Endpoint {
  sockaddr_storage address{};
  socklen_t length = 0;
  int family = AF_UNSPEC;
  std::string text;  // as given
};

// "192.0.2.1:9000" or "[2001:db8::1]:9000"; the port 1..65535.
[[nodiscard]] absl::StatusOr<Endpoint> ParseEndpoint(const std::string& text);
// "192.0.2.1" or "2001:db8::1" (brackets allowed); port 0.
[[nodiscard]] absl::StatusOr<Endpoint> ParseAddress(const std::string& text);

inline constexpr uint32_t kMaxFlows = 64;

struct SendOptions {
  Endpoint to;
  double rate_mbps = 0;
  uint32_t size_bytes = 0;
  uint32_t stream_id = 0;  // the first flow's; flow f is stream_id + f
  uint32_t flows = 1;      // 1..kMaxFlows, packets taken round robin
  double duration_s = 0;
  bool has_bind = false;
  Endpoint bind;
  std::string report_path;  // empty: stdout only
  // The packet interval the rate and size make, in ns (of all flows together).
  [[nodiscard]] int64_t interval_ns() const;
  // One flow's packet interval: flows x interval_ns().
  [[nodiscard]] int64_t flow_interval_ns() const { return interval_ns() * flows; }
};

struct ReceiveOptions {
  Endpoint listen;
  double duration_s = 0;
  std::string report_path;
  double late_ms = 50;
  double outage_min_ms = 1;
  bool bins = false;
  int rcvbuf_bytes = 4 << 20;
  int realtime_priority = 0;  // 1..99: SCHED_FIFO (best effort); 0: normal scheduling
};

struct HelpRequest {};

using TrafficCommand = std::variant<SendOptions, ReceiveOptions, HelpRequest>;

// `args` are argv[1..]. InvalidArgument with a one-line message naming the
// flag on any bad usage: no or an unknown subcommand, an unknown, repeated or
// valueless flag, a missing required flag, a bad address or number, a rate
// <= 0, a size outside 32..9000, a flow's packet interval outside 1 ns..4.29 s,
// --flows outside 1..64 or stream ids past 4294967295, a
// --bind of another address family than --to.
[[nodiscard]] absl::StatusOr<TrafficCommand> ParseTrafficCommand(const std::vector<std::string>& args);

}  // namespace geodesic::traffic
