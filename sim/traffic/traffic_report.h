#pragma once
// The JSON that geodesic-traffic writes: the receiver's report and the
// sender's summary. Pure: formatting only. Thread-safe.
//
// Receiver report:
//   {"late_after_ms": L, "duration_s": S, "socket_drops": N,
//    "rejected": {"too_short": N, "bad_magic": N, "size_mismatch": N},
//    "streams": [{"stream": ID, "first_sequence": N, "highest_sequence": N,
//                 "received": N, "lost": N, "reordered": N, "duplicates": N, "late": N,
//                 "received_bytes": N, "rate_mbps": R, "interval_ns": N,
//                 "max_one_way_delay_ms": D, "unbinned": N,
//                 "longest_gap_packets": N, "longest_gap_ms": G, "longest_gap_wall_ms": W,
//                 "longest_gap": null | {"first_missing": N, "last_missing": N,
//                                         "last_before_receive_ns": T, "first_after_receive_ns": T},
//                 "bin_columns": [...], "bins": [[start_ms, received, lost, reordered, late, duplicates], ...]}]}
// (bin_columns and bins only when asked for). rate_mbps is the received
// payload over the time from the first to the last arrival.
// socket_drops: datagrams the kernel dropped at the receiver's full socket
// buffer (SO_RXQ_OVFL), of every stream; they are also in the streams' `lost`.
#include <cstdint>
#include <string>

#include "sim/traffic/stream_stats.h"

namespace geodesic::traffic {

struct ReceiverReportContext {
  double late_after_ms = 0;
  double duration_s = 0;   // how long the receiver listened
  uint64_t socket_drops = 0;
  bool bins = false;
};

[[nodiscard]] std::string FormatReceiverReport(const StreamReceiverStats& stats, const ReceiverReportContext& context);

// What one send run did.
struct SendSummary {
  uint32_t stream_id = 0;
  std::string to;
  double target_rate_mbps = 0;
  uint32_t size_bytes = 0;
  int64_t interval_ns = 0;
  uint64_t packets_sent = 0;    // sequence numbers 0..packets_sent-1 were used
  uint64_t send_errors = 0;     // sends the kernel refused (the sequence number is still used)
  uint64_t skipped_slots = 0;   // schedule slots given up after a stall (no sequence number)
  double duration_s = 0;        // first send to the end of the schedule
  double rate_mbps = 0;         // payload of packets_sent over duration_s
};

[[nodiscard]] std::string FormatSendSummary(const SendSummary& summary);

}  // namespace geodesic::traffic
