#pragma once
// The sending half of geodesic-traffic: one paced UDP stream (I/O shell over
// PacingSchedule and the stream packet codec).
#include <atomic>

#include "absl/status/statusor.h"
#include "sim/traffic/traffic_options.h"
#include "sim/traffic/traffic_report.h"

namespace geodesic::traffic {

// Sends options.duration_s worth of packets at options.rate_mbps, taken round
// robin by options.flows flows (streams stream_id.., each from a socket of its
// own; sequence numbers from 0 per flow, one per packet sent, timestamped with
// CLOCK_REALTIME at the send), paced on CLOCK_MONOTONIC by a PacingSchedule from the start, then
// waits out the duration. Stops early, with the summary so far, once `stop`
// is set (checked between packets and at least every 50 ms while waiting).
// A send the kernel refuses (no route during an outage, a full buffer) is
// counted in send_errors and its sequence number is not reused.
// Unavailable when the socket cannot be opened or bound.
[[nodiscard]] absl::StatusOr<SendSummary> RunSender(const SendOptions& options, const std::atomic<bool>& stop);

}  // namespace geodesic::traffic
