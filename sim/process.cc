#include "sim/process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <spawn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <set>

#include "absl/strings/str_cat.h"
#include "sim/wait_until.h"

namespace geodesic::sim {
namespace {

[[noreturn]] void ExecChild(const std::vector<std::string>& argv, int out_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // the parent may block signals
  dup2(out_fd, STDOUT_FILENO);
  dup2(out_fd, STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  dprintf(out_fd, "exec %s failed\n", args[0]);
  _exit(127);
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(std::vector<std::string> argv,
                                                                  std::string log_path) {
  if (argv.empty()) return absl::InvalidArgumentError("no program");
  if (access(argv[0].c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(argv[0], ": not an executable"));
  }
  const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(absl::StrCat(log_path, ": cannot open"));
  const pid_t child = fork();
  if (child < 0) {
    close(fd);
    return absl::UnavailableError("fork failed");
  }
  if (child == 0) ExecChild(argv, fd);
  close(fd);
  return std::unique_ptr<ChildProcess>(new ChildProcess(child, std::move(log_path)));
}

ChildProcess::~ChildProcess() {
  if (!exit_code_) Stop(2000);
}

void ChildProcess::Signal(int signal_number) {
  if (!exit_code_) kill(pid_, signal_number);
}

std::optional<int> ChildProcess::Wait(int timeout_ms) {
  if (exit_code_) return exit_code_;
  (void)WaitUntil(absl::StrCat("process ", pid_, " to exit"), std::chrono::milliseconds(timeout_ms), [&] {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
    exit_code_ = DecodeStatus(status);
    return true;
  }, std::chrono::milliseconds(10));
  return exit_code_;
}

int ChildProcess::Stop(int grace_ms) {
  if (exit_code_) return *exit_code_;
  kill(pid_, SIGTERM);
  if (auto code = Wait(grace_ms)) return *code;
  kill(pid_, SIGKILL);
  return Wait(10'000).value_or(-1);
}

bool ChildProcess::running() { return !Wait(0).has_value(); }

absl::StatusOr<RunResult> RunCommand(const std::vector<std::string>& argv) {
  if (argv.empty()) return absl::InvalidArgumentError("no program");
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return absl::UnavailableError("pipe failed");
  // posix_spawn (vfork underneath), not fork: a short command must not copy a
  // big caller's page tables, nor leave its memory copy-on-write (benchmarks
  // poll FRR through vtysh while they time the caller).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);  // the caller may block signals
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(pipe_fds[1]);
  if (error != 0) {
    close(pipe_fds[0]);
    return absl::UnavailableError(absl::StrCat("cannot run ", argv[0], ": ", strerror(error)));
  }
  std::string output;
  char buffer[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) output.append(buffer, n);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return RunResult{DecodeStatus(status), std::move(output)};
}

namespace {

// One free port as the kernel picks it for a bind to port 0.
absl::StatusOr<int> PickPort(int socket_type, const std::string& address) {
  const int fd = ::socket(AF_INET, socket_type | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  socklen_t length = sizeof sin;
  if (fd < 0 || inet_pton(AF_INET, address.c_str(), &sin.sin_addr) != 1 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &length) != 0) {
    if (fd >= 0) ::close(fd);
    return absl::UnavailableError(absl::StrCat("no free port on ", address));
  }
  ::close(fd);
  return ntohs(sin.sin_port);
}

}  // namespace

absl::StatusOr<int> FreePort(int socket_type, const std::string& address) {
  // Once closed, the port the kernel picked may be picked again at the next
  // call: two members of one etcd cluster were once given the same peer port.
  // Never hand out a port twice in this process.
  static std::mutex mu;
  static std::set<int> handed_out;
  constexpr int kAttempts = 64;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto port = PickPort(socket_type, address);
    if (!port.ok()) return port.status();
    std::lock_guard lock(mu);
    if (handed_out.insert(*port).second) return *port;
  }
  return absl::UnavailableError(absl::StrCat("no port on ", address, " not handed out already, in ", kAttempts,
                                              " tries"));
}

}  // namespace geodesic::sim
