#pragma once
// A UDP socket of one address family, closed when destroyed, for the sender
// and the receiver of geodesic-traffic. Move-only; thread-compatible.
#include "absl/status/statusor.h"

namespace geodesic::traffic {

class UdpSocket {
 public:
  // Unavailable (with errno's text) when the kernel refuses one.
  [[nodiscard]] static absl::StatusOr<UdpSocket> Open(int family);
  UdpSocket(UdpSocket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  UdpSocket& operator=(UdpSocket&& other) noexcept;
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;
  ~UdpSocket();

  int fd() const { return fd_; }

 private:
  explicit UdpSocket(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace geodesic::traffic
