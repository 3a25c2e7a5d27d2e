#pragma once
// The receiving half of geodesic-traffic: one UDP socket counting every
// stream that arrives (I/O shell over StreamReceiverStats).
#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "sim/traffic/stream_stats.h"
#include "sim/traffic/traffic_options.h"

namespace geodesic::traffic {

struct ReceiverRun {
  double duration_s = 0;      // how long it listened
  uint64_t socket_drops = 0;  // the kernel's count of datagrams dropped at the full socket buffer
};

// Listens on options.listen for options.duration_s, or until `stop` is set
// (looked at least every 50 ms), recording every datagram into `stats` with
// the kernel's receive timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME). The receive
// buffer is options.rcvbuf_bytes (forced past rmem_max where permitted).
// `between_reads`, when set, is called between reads (at least every 50 ms)
// with the run so far, its duration included: the program writes a snapshot
// of its report there when asked to. Unavailable when the socket cannot be
// opened or bound.
[[nodiscard]] absl::StatusOr<ReceiverRun> RunReceiver(
    const ReceiveOptions& options, const std::atomic<bool>& stop, StreamReceiverStats& stats,
    const std::function<void(const ReceiverRun&)>& between_reads = {});

}  // namespace geodesic::traffic
