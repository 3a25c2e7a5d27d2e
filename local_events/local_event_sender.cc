#include "local_events/local_event_sender.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace geodesic::local_events {

LocalEventSender::LocalEventSender(SenderOptions options) : options_(std::move(options)) {}

LocalEventSender::~LocalEventSender() { Stop(); }

void LocalEventSender::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Run(); });
}

void LocalEventSender::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void LocalEventSender::Publish(const std::vector<v1::LinkReport>& links) {
  {
    std::lock_guard lock(mu_);
    for (const v1::LinkReport& report : links) {
      current_[report.link_id()] = report;
      if (fd_ >= 0) pending_.push_back(report);
    }
  }
  cv_.notify_all();
}

bool LocalEventSender::connected() const {
  std::lock_guard lock(mu_);
  return fd_ >= 0;
}

uint64_t LocalEventSender::messages_sent() const {
  std::lock_guard lock(mu_);
  return messages_sent_;
}

bool LocalEventSender::ConnectLocked() {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (options_.socket_path.size() >= sizeof(address.sun_path)) return false;
  std::memcpy(address.sun_path, options_.socket_path.data(), options_.socket_path.size());
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  // A stuck routerd must not stall the agent: a send that cannot complete
  // within this ends the connection (the next one starts with a snapshot).
  const timeval send_timeout{.tv_sec = 1, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  next_seq_ = 1;
  v1::LocalLinkEvents snapshot;
  snapshot.set_snapshot(true);
  for (const auto& [id, report] : current_) *snapshot.add_links() = report;
  pending_.clear();
  return SendLocked(snapshot);
}

bool LocalEventSender::SendLocked(v1::LocalLinkEvents& message) {
  message.set_facility_id(options_.facility_id);
  message.set_incarnation(options_.incarnation);
  message.set_seq(next_seq_);
  const std::string bytes = message.SerializeAsString();
  if (::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(bytes.size())) {
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  ++next_seq_;
  ++messages_sent_;
  return true;
}

void LocalEventSender::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (fd_ < 0 && !ConnectLocked()) {
      cv_.wait_for(lock, options_.retry_interval, [this] { return stopping_; });
      continue;
    }
    // Wake for changes; now and then also to notice a routerd that left.
    cv_.wait_for(lock, options_.retry_interval, [this] { return stopping_ || !pending_.empty(); });
    if (stopping_) break;
    if (pending_.empty()) {
      char byte;
      if (::recv(fd_, &byte, 1, MSG_DONTWAIT | MSG_PEEK) == 0) {  // orderly close by routerd
        ::close(fd_);
        fd_ = -1;
      }
      continue;
    }
    v1::LocalLinkEvents delta;
    for (v1::LinkReport& report : pending_) *delta.add_links() = std::move(report);
    pending_.clear();
    SendLocked(delta);
  }
}

}  // namespace geodesic::local_events
