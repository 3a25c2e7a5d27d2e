#include "sim/traffic/stream_receiver.h"

#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sim/traffic/stream_packet.h"
#include "sim/traffic/udp_socket.h"

namespace geodesic::traffic {
namespace {

constexpr int kBatch = 64;
// One byte more than the largest stream packet: a longer datagram arrives
// truncated to a length no valid header declares.
constexpr size_t kDatagramBuffer = kStreamPacketMaxBytes + 1;
constexpr int64_t kStopCheckMs = 50;
// At the end, read at most this many batches more (a sender may still be going).
constexpr int kDrainBatches = 1024;

int64_t Now(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

absl::Status Configure(int fd, const ReceiveOptions& options) {
  const int one = 1;
  // Root may go past net.core.rmem_max; anyone else gets at most that.
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &options.rcvbuf_bytes, sizeof(int)) != 0 &&
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &options.rcvbuf_bytes, sizeof(int)) != 0) {
    return absl::UnavailableError(absl::StrCat("SO_RCVBUF: ", strerror(errno)));
  }
  if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0) {
    return absl::UnavailableError(absl::StrCat("SO_TIMESTAMPNS: ", strerror(errno)));
  }
  if (setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one) != 0) {
    return absl::UnavailableError(absl::StrCat("SO_RXQ_OVFL: ", strerror(errno)));
  }
  if (bind(fd, reinterpret_cast<const sockaddr*>(&options.listen.address), options.listen.length) != 0) {
    return absl::UnavailableError(absl::StrCat("bind ", options.listen.text, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

// A batch of receive buffers for recvmmsg, with room for the timestamp and
// drop-count control messages.
struct Batch {
  Batch() : data(kBatch * kDatagramBuffer) {
    for (int i = 0; i < kBatch; ++i) {
      iov[i] = {.iov_base = data.data() + i * kDatagramBuffer, .iov_len = kDatagramBuffer};
    }
  }
  void Reset() {
    for (int i = 0; i < kBatch; ++i) {
      messages[i] = {};
      messages[i].msg_hdr.msg_iov = &iov[i];
      messages[i].msg_hdr.msg_iovlen = 1;
      messages[i].msg_hdr.msg_control = control[i].data();
      messages[i].msg_hdr.msg_controllen = control[i].size();
    }
  }
  std::vector<uint8_t> data;
  std::array<iovec, kBatch> iov{};
  std::array<mmsghdr, kBatch> messages{};
  std::array<std::array<uint8_t, CMSG_SPACE(sizeof(timespec)) + CMSG_SPACE(sizeof(uint32_t))>, kBatch> control{};
};

// Reads what is queued (up to one batch) without waiting and records it;
// the number of datagrams read.
int ReceiveBatch(int fd, Batch& batch, StreamReceiverStats& stats, ReceiverRun& run) {
  batch.Reset();
  const int count = recvmmsg(fd, batch.messages.data(), kBatch, MSG_DONTWAIT, nullptr);
  if (count <= 0) return 0;
  const int64_t fallback_receive_ns = Now(CLOCK_REALTIME);
  for (int i = 0; i < count; ++i) {
    msghdr& header = batch.messages[i].msg_hdr;
    int64_t receive_ns = fallback_receive_ns;
    for (cmsghdr* cmsg = CMSG_FIRSTHDR(&header); cmsg != nullptr; cmsg = CMSG_NXTHDR(&header, cmsg)) {
      if (cmsg->cmsg_level != SOL_SOCKET) continue;
      if (cmsg->cmsg_type == SCM_TIMESTAMPNS) {
        timespec stamp{};
        std::memcpy(&stamp, CMSG_DATA(cmsg), sizeof stamp);
        receive_ns = static_cast<int64_t>(stamp.tv_sec) * 1'000'000'000 + stamp.tv_nsec;
      } else if (cmsg->cmsg_type == SO_RXQ_OVFL) {
        uint32_t drops = 0;
        std::memcpy(&drops, CMSG_DATA(cmsg), sizeof drops);
        run.socket_drops = drops;  // the socket's running total
      }
    }
    const auto* data = static_cast<const uint8_t*>(batch.iov[i].iov_base);
    stats.RecordDatagram(std::span<const uint8_t>(data, batch.messages[i].msg_len), receive_ns);
  }
  return count;
}

}  // namespace

absl::StatusOr<ReceiverRun> RunReceiver(const ReceiveOptions& options, const std::atomic<bool>& stop,
                                        StreamReceiverStats& stats,
                                        const std::function<void(const ReceiverRun&)>& between_reads) {
  absl::StatusOr<UdpSocket> opened = UdpSocket::Open(options.listen.family);
  if (!opened.ok()) return opened.status();
  const UdpSocket& socket = *opened;
  if (absl::Status configured = Configure(socket.fd(), options); !configured.ok()) return configured;

  ReceiverRun run;
  auto batch = std::make_unique<Batch>();
  const int64_t start_ns = Now(CLOCK_MONOTONIC);
  const int64_t end_ns = start_ns + static_cast<int64_t>(options.duration_s * 1e9);
  while (!stop.load(std::memory_order_relaxed)) {
    const int64_t now_ns = Now(CLOCK_MONOTONIC);
    if (now_ns >= end_ns) break;
    pollfd readable{.fd = socket.fd(), .events = POLLIN, .revents = 0};
    const int64_t wait_ms = std::min(kStopCheckMs, (end_ns - now_ns + 999'999) / 1'000'000);
    if (poll(&readable, 1, static_cast<int>(wait_ms)) > 0) ReceiveBatch(socket.fd(), *batch, stats, run);
    // (else a timeout, or EINTR from a signal)
    if (between_reads) {
      run.duration_s = static_cast<double>(Now(CLOCK_MONOTONIC) - start_ns) / 1e9;
      between_reads(run);
    }
  }
  run.duration_s = static_cast<double>(std::min(Now(CLOCK_MONOTONIC), end_ns) - start_ns) / 1e9;
  // What arrived before the end is counted, even if not read yet.
  for (int batches = 0; batches < kDrainBatches && ReceiveBatch(socket.fd(), *batch, stats, run) > 0; ++batches) {
  }
  return run;
}

}  // namespace geodesic::traffic
