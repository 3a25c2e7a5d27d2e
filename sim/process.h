#pragma once
// A child process with its output in a log file; killed when the handle goes
// away, and also when the parent dies (PR_SET_PDEATHSIG), so a crashed test
// leaves nothing running. Thread-compatible.
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace geodesic::sim {

class ChildProcess {
 public:
  // Starts `argv` (argv[0] is the program path) with stdout+stderr appended to `log_path`.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ChildProcess>> Spawn(
      std::vector<std::string> argv, std::string log_path);
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  void Signal(int signal_number);
  // Waits up to `timeout_ms` for the process to exit; its exit code (or 128+signal).
  std::optional<int> Wait(int timeout_ms);
  // SIGTERM, then SIGKILL after `grace_ms`; the exit code.
  int Stop(int grace_ms = 3000);
  bool running();

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}

  pid_t pid_;
  std::string log_path_;
  std::optional<int> exit_code_;
};
using ChildProcessPtr = std::unique_ptr<ChildProcess>;

// Runs `argv` to completion; its exit code and combined output.
struct RunResult {
  int exit_code;
  std::string output;
};
[[nodiscard]] absl::StatusOr<RunResult> RunCommand(const std::vector<std::string>& argv);

// A port of `address` (IPv4) that nobody is bound to right now, for a child
// process to listen on. SOCK_STREAM or SOCK_DGRAM.
[[nodiscard]] absl::StatusOr<int> FreePort(int socket_type, const std::string& address = "127.0.0.1");

}  // namespace geodesic::sim
