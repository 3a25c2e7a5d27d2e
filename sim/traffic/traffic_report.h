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
//                 "outages": [{"first_missing": N, "last_missing": N, "packets": N, "ms": G, "wall_ms": W,
//                              "last_before": {"sequence": N, "send_ns": T, "receive_ns": T},
//                              "first_after": {"sequence": N, "send_ns": T, "receive_ns": T}}, ...],
//                 "outages_omitted": N,
//                 "bin_columns": [...], "bins": [[start_ms, received, lost, reordered, late, duplicates], ...]}]}
// (bin_columns and bins only when asked for). rate_mbps is the received
// payload over the time from the first to the last arrival. `outages` are the
// gaps of at least outage_min_ms (packets x interval), in sequence order, the
// first kMaxOutagesPerStream of them: for a failure at time T, the outage
// whose send times span T says how long the stream was cut and when its
// first packet after T arrived (first_after.receive_ns).
// socket_drops: datagrams the kernel dropped at the receiver's full socket
// buffer (SO_RXQ_OVFL), of every stream; they are also in the streams' `lost`.
#include <cstdint>
#include <string>

#include "sim/traffic/stream_stats.h"

namespace geodesic::traffic {

inline constexpr size_t kMaxOutagesPerStream = 1000;

struct ReceiverReportContext {
  double late_after_ms = 0;
  double outage_min_ms = 1;
  double duration_s = 0;   // how long the receiver listened
  uint64_t socket_drops = 0;
  bool bins = false;
};

[[nodiscard]] std::string FormatReceiverReport(const StreamReceiverStats& stats, const ReceiverReportContext& context);

// What one send run did.
struct SendSummary {
  uint32_t stream_id = 0;  // the first flow's
  uint32_t flows = 1;      // streams stream_id..stream_id+flows-1, packets round robin
  std::string to;
  double target_rate_mbps = 0;
  uint32_t size_bytes = 0;
  int64_t interval_ns = 0;
  // Of every flow: packet k went to flow k % flows as its sequence number k / flows.
  uint64_t packets_sent = 0;
  uint64_t send_errors = 0;     // sends the kernel refused (the sequence number is still used)
  uint64_t skipped_slots = 0;   // schedule slots given up after a stall (no sequence number)
  double duration_s = 0;        // first send to the end of the schedule
  double rate_mbps = 0;         // payload of packets_sent over duration_s
};

[[nodiscard]] std::string FormatSendSummary(const SendSummary& summary);

}  // namespace geodesic::traffic
