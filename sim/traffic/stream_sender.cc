#include "sim/traffic/stream_sender.h"

#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sim/traffic/pacing_schedule.h"
#include "sim/traffic/stream_packet.h"
#include "sim/traffic/udp_socket.h"

namespace geodesic::traffic {
namespace {

// Further behind its schedule than this, the sender gives the missed slots up
// instead of bursting them out (PacingSchedule).
constexpr int64_t kMaxLagNs = 50'000'000;
constexpr int64_t kStopCheckNs = 50'000'000;

int64_t Now(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

void SleepUntil(int64_t monotonic_ns) {
  timespec until{.tv_sec = monotonic_ns / 1'000'000'000, .tv_nsec = monotonic_ns % 1'000'000'000};
  // EINTR (a signal): the caller looks at the clock and the stop flag again.
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr);
}

}  // namespace

absl::StatusOr<SendSummary> RunSender(const SendOptions& options, const std::atomic<bool>& stop) {
  // A socket per flow: each its own source port, so each its own 5-tuple.
  std::vector<UdpSocket> sockets;
  for (uint32_t flow = 0; flow < options.flows; ++flow) {
    absl::StatusOr<UdpSocket> opened = UdpSocket::Open(options.to.family);
    if (!opened.ok()) return opened.status();
    if (options.has_bind &&
        bind(opened->fd(), reinterpret_cast<const sockaddr*>(&options.bind.address), options.bind.length) != 0) {
      return absl::UnavailableError(absl::StrCat("bind ", options.bind.text, ": ", strerror(errno)));
    }
    sockets.push_back(*std::move(opened));
  }

  SendSummary summary;
  summary.stream_id = options.stream_id;
  summary.flows = options.flows;
  summary.to = options.to.text;
  summary.target_rate_mbps = options.rate_mbps;
  summary.size_bytes = options.size_bytes;
  summary.interval_ns = options.interval_ns();

  std::vector<uint8_t> buffer(options.size_bytes);
  StreamPacket packet{.stream_id = options.stream_id,
                      .sequence = 0,
                      .send_time_ns = 0,
                      .interval_ns = static_cast<uint32_t>(options.flow_interval_ns()),
                      .size_bytes = options.size_bytes};
  const int64_t start_ns = Now(CLOCK_MONOTONIC);
  const int64_t end_ns = start_ns + static_cast<int64_t>(options.duration_s * 1e9);
  PacingSchedule schedule(start_ns, summary.interval_ns, kMaxLagNs);
  while (!stop.load(std::memory_order_relaxed)) {
    const int64_t due_ns = schedule.next_due_ns();
    if (due_ns >= end_ns) break;
    const int64_t now_ns = Now(CLOCK_MONOTONIC);
    if (now_ns < due_ns) {
      SleepUntil(std::min(due_ns, now_ns + kStopCheckNs));
      continue;
    }
    schedule.Take(now_ns);
    const uint64_t taken = schedule.packets_taken() - 1;
    const uint32_t flow = static_cast<uint32_t>(taken % options.flows);
    packet.stream_id = options.stream_id + flow;
    packet.sequence = taken / options.flows;
    packet.send_time_ns = Now(CLOCK_REALTIME);
    if (absl::Status encoded = EncodeStreamPacket(packet, buffer); !encoded.ok()) return encoded;
    const ssize_t sent = sendto(sockets[flow].fd(), buffer.data(), buffer.size(), 0,
                                reinterpret_cast<const sockaddr*>(&options.to.address), options.to.length);
    if (sent != static_cast<ssize_t>(buffer.size())) ++summary.send_errors;
  }
  // The stream lasts its duration: the last packet's interval is part of it.
  for (int64_t now_ns = Now(CLOCK_MONOTONIC); now_ns < end_ns && !stop.load(std::memory_order_relaxed);
       now_ns = Now(CLOCK_MONOTONIC)) {
    SleepUntil(std::min(end_ns, now_ns + kStopCheckNs));
  }
  const int64_t elapsed_ns = std::min(Now(CLOCK_MONOTONIC), end_ns) - start_ns;
  summary.packets_sent = schedule.packets_taken();
  summary.skipped_slots = schedule.skipped_slots();
  summary.duration_s = static_cast<double>(elapsed_ns) / 1e9;
  summary.rate_mbps = elapsed_ns > 0 ? static_cast<double>(summary.packets_sent) * options.size_bytes * 8 * 1e3 /
                                           static_cast<double>(elapsed_ns)
                                     : 0;
  return summary;
}

}  // namespace geodesic::traffic
