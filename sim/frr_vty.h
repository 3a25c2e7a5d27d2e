#pragma once
// A client of one FRR daemon's vty socket: what vtysh speaks, without a
// process per command (benchmarks poll bgpd every millisecond). Connects on
// first use and again after any error, so it survives the daemon's restart.
// Thread-safe: commands from several threads are sent one at a time.
#include <mutex>
#include <string>

#include "absl/status/statusor.h"

namespace geodesic::sim {

class FrrVty {
 public:
  // `socket_path` is the daemon's "<vty_socket dir>/<daemon>.vty".
  explicit FrrVty(std::string socket_path) : socket_path_(std::move(socket_path)) {}
  ~FrrVty();
  FrrVty(const FrrVty&) = delete;
  FrrVty& operator=(const FrrVty&) = delete;

  // Runs one CLI command in enable mode; its output. Unavailable when the
  // daemon cannot be reached or closes the socket; InvalidArgument (quoting
  // the daemon's answer) when it refuses the command.
  [[nodiscard]] absl::StatusOr<std::string> Command(const std::string& command) const;

  const std::string& socket_path() const { return socket_path_; }

 private:
  const std::string socket_path_;
  mutable std::mutex mu_;
  mutable int fd_ = -1;  // connected lazily, closed after errors
};

}  // namespace geodesic::sim
