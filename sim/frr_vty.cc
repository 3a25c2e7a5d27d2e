#include "sim/frr_vty.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace geodesic::sim {
namespace {

// The vtysh protocol: a command with its NUL; the answer ends with three NULs
// and a status byte (0: success). The daemon's status byte, the output in `output`.
absl::StatusOr<int> Exchange(int fd, const std::string& line, std::string& output) {
  if (write(fd, line.c_str(), line.size() + 1) != static_cast<ssize_t>(line.size() + 1)) {
    return absl::UnavailableError("write to the vty failed");
  }
  output.clear();
  char buffer[65536];
  while (output.size() < 4 || output.compare(output.size() - 4, 3, std::string(3, '\0')) != 0) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) return absl::UnavailableError("the daemon closed its vty");
    output.append(buffer, static_cast<size_t>(n));
  }
  const int status = output.back();
  output.resize(output.size() - 4);
  return status;
}

}  // namespace

FrrVty::~FrrVty() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<std::string> FrrVty::Command(const std::string& command) const {
  std::lock_guard lock(mu_);
  std::string output;
  if (fd_ < 0) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path_.c_str());
    if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      if (fd_ >= 0) close(fd_);
      fd_ = -1;
      return absl::UnavailableError(absl::StrCat("cannot connect to ", socket_path_));
    }
    auto enabled = Exchange(fd_, "enable", output);
    if (!enabled.ok() || *enabled != 0) {
      close(fd_);
      fd_ = -1;
      return absl::UnavailableError(absl::StrCat(socket_path_, " refused \"enable\""));
    }
  }
  auto status = Exchange(fd_, command, output);
  if (!status.ok()) {
    close(fd_);
    fd_ = -1;
    return absl::UnavailableError(absl::StrCat(socket_path_, ": ", status.status().message()));
  }
  if (*status != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(socket_path_, ": '", command, "' failed (", *status, "): ", output.substr(0, 300)));
  }
  return output;
}

}  // namespace geodesic::sim
