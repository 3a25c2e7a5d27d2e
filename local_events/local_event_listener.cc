#include "local_events/local_event_listener.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <list>

#include "absl/strings/str_cat.h"
#include "daemon/log.h"
#include "entity/entity_id.h"

namespace geodesic::local_events {

struct LocalEventListener::AtomicCounters {
  std::atomic<uint64_t> messages{0}, connections{0}, rejected_peer{0}, malformed{0}, oversized{0},
      wrong_facility{0}, out_of_order{0}, unknown_link{0};
};

struct LocalEventListener::Connection {
  int fd = -1;
  uint64_t expected_seq = 1;
};

namespace {

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

LocalEventListener::LocalEventListener(ListenerOptions options, Handler handler)
    : options_(std::move(options)), handler_(std::move(handler)), counters_(std::make_unique<AtomicCounters>()) {}

LocalEventListener::~LocalEventListener() { Stop(); }

absl::Status LocalEventListener::Start() {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (options_.socket_path.empty() || options_.socket_path.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("socket path \"", options_.socket_path, "\" must have 1 to ",
                                                   sizeof(address.sun_path) - 1, " characters"));
  }
  std::memcpy(address.sun_path, options_.socket_path.data(), options_.socket_path.size());

  // A socket file left by a routerd that died is replaced; a live one is not.
  struct stat existing {};
  if (::lstat(options_.socket_path.c_str(), &existing) == 0) {
    if (!S_ISSOCK(existing.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(options_.socket_path, " exists and is not a socket"));
    }
    const int probe = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    const bool live = probe >= 0 && ::connect(probe, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    if (probe >= 0) ::close(probe);
    if (live) return absl::AlreadyExistsError(absl::StrCat(options_.socket_path, " is served by another process"));
    ::unlink(options_.socket_path.c_str());
  }
  listen_fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) return Errno("socket");
  // Only the owner and its group may even connect; peer credentials decide.
  const mode_t old_mask = ::umask(007);
  const int bound = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::umask(old_mask);
  if (bound != 0 || ::listen(listen_fd_, 8) != 0) {
    absl::Status status = Errno(absl::StrCat("bind ", options_.socket_path));
    ::close(listen_fd_);
    listen_fd_ = -1;
    return status;
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return Errno("eventfd");
  thread_ = std::thread([this] { Serve(); });
  return absl::OkStatus();
}

void LocalEventListener::Stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  thread_.join();
  ::close(wake_fd_);
  ::close(listen_fd_);
  ::unlink(options_.socket_path.c_str());
  wake_fd_ = listen_fd_ = -1;
}

ListenerCounters LocalEventListener::counters() const {
  return ListenerCounters{.messages = counters_->messages,
                          .connections = counters_->connections,
                          .rejected_peer = counters_->rejected_peer,
                          .malformed = counters_->malformed,
                          .oversized = counters_->oversized,
                          .wrong_facility = counters_->wrong_facility,
                          .out_of_order = counters_->out_of_order,
                          .unknown_link = counters_->unknown_link};
}

void LocalEventListener::Serve() {
  std::list<Connection> connections;
  std::vector<pollfd> fds;
  while (true) {
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const Connection& connection : connections) fds.push_back({connection.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      daemon::LogError("local event listener stopped", {{"error", std::strerror(errno)}});
      break;
    }
    if (fds[0].revents != 0) break;
    // Connections first (fds[2..] match `connections` as polled).
    auto it = connections.begin();
    for (size_t i = 2; i < fds.size(); ++i, ++it) {
      if (fds[i].revents == 0) continue;
      if (!Receive(*it)) {
        ::close(it->fd);
        it->fd = -1;
      }
    }
    connections.remove_if([](const Connection& connection) { return connection.fd < 0; });
    if (fds[1].revents != 0) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) continue;
      ucred peer{};
      socklen_t length = sizeof peer;
      const std::vector<uid_t> allowed =
          options_.allowed_uids.empty() ? std::vector<uid_t>{::getuid()} : options_.allowed_uids;
      if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 ||
          std::find(allowed.begin(), allowed.end(), peer.uid) == allowed.end()) {
        ++counters_->rejected_peer;
        daemon::LogWarn("local event connection refused",
                        {{"uid", std::to_string(peer.uid)}, {"pid", std::to_string(peer.pid)}});
        ::close(fd);
        continue;
      }
      ++counters_->connections;
      connections.push_back(Connection{.fd = fd});
    }
  }
  for (const Connection& connection : connections) ::close(connection.fd);
}

bool LocalEventListener::Receive(Connection& connection) {
  std::string& buffer = receive_buffer_;
  buffer.resize(options_.max_message_bytes + 1);
  const ssize_t length = ::recv(connection.fd, buffer.data(), buffer.size(), MSG_TRUNC | MSG_DONTWAIT);
  if (length < 0) return errno == EAGAIN || errno == EINTR;
  if (length == 0) return false;  // the agent went away
  auto refuse = [&](std::atomic<uint64_t>& counter, const std::string& why) {
    ++counter;
    daemon::LogWarn("local event message refused", {{"reason", why}});
    return false;
  };
  if (static_cast<size_t>(length) > options_.max_message_bytes) {
    return refuse(counters_->oversized, absl::StrCat("message of ", length, " bytes"));
  }
  v1::LocalLinkEvents message;
  if (!message.ParseFromArray(buffer.data(), static_cast<int>(length)) || message.incarnation() == 0) {
    return refuse(counters_->malformed, "not a LocalLinkEvents with an incarnation");
  }
  if (message.facility_id() != options_.facility_id) {
    return refuse(counters_->wrong_facility, absl::StrCat("facility \"", message.facility_id(), "\""));
  }
  if (message.seq() != connection.expected_seq || message.snapshot() != (connection.expected_seq == 1)) {
    return refuse(counters_->out_of_order,
                  absl::StrCat("seq ", message.seq(), message.snapshot() ? " (snapshot)" : "", ", expected ",
                               connection.expected_seq, connection.expected_seq == 1 ? " (snapshot)" : ""));
  }
  for (const v1::LinkReport& report : message.links()) {
    const bool known = options_.link_ids.empty() ? entity::IsValidEntityId(report.link_id())
                                                 : options_.link_ids.count(report.link_id()) > 0;
    if (!known) {
      return refuse(counters_->unknown_link, absl::StrCat("link \"", report.link_id(), "\""));
    }
  }
  ++connection.expected_seq;
  ++counters_->messages;
  handler_(message);
  return true;
}

}  // namespace geodesic::local_events
