#include "site_agent/probe/probe_engine.h"

#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>

#include <cerrno>
#include <cstring>

#include <bitset>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "daemon/log.h"
#include "site_agent/probe/probe_packet.h"

namespace geodesic::site_agent::probe {
namespace {

using boost::asio::ip::udp;
using Clock = std::chrono::steady_clock;

uint64_t Nanos(Clock::time_point at) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count());
}

// Anti-replay for one peer's session, as in IPsec: the highest sequence
// seen and which of the kWindow below it were.
class ReplayWindow {
 public:
  static constexpr uint64_t kWindow = 1024;
  // True when `seq` of `session` was not seen before (and records it).
  bool Accept(uint64_t session, uint64_t seq) {
    if (session != session_) {  // the peer's prober restarted
      session_ = session;
      highest_ = 0;
      seen_.reset();
    }
    if (seq > highest_) {
      const uint64_t shift = seq - highest_;
      seen_ = shift >= kWindow ? std::bitset<kWindow>() : seen_ << shift;
      seen_.set(0);
      highest_ = seq;
      return true;
    }
    const uint64_t age = highest_ - seq;
    if (age >= kWindow || seen_.test(age)) return false;
    seen_.set(age);
    return true;
  }

 private:
  uint64_t session_ = 0;
  uint64_t highest_ = 0;
  std::bitset<kWindow> seen_;
};

class ProbeEngineImpl final : public ProbeEngine {
 public:
  ProbeEngineImpl(ProbeEngineOptions options, StateChanged on_change)
      : options_(std::move(options)), on_change_(std::move(on_change)), socket_(io_), timer_(io_) {
    std::random_device random;
    while (session_ == 0) session_ = (static_cast<uint64_t>(random()) << 32) ^ random();
    for (const ProbedLink& link : options_.links) links_.push_back(Link{link.peer, LinkEstimator(options_.estimator)});
    const auto& accepted = options_.accept_from;
    if (accepted.empty()) {
      for (const ProbedLink& link : options_.links) replay_.emplace(link.peer, ReplayWindow());
    } else {
      for (const udp::endpoint& peer : accepted) replay_.emplace(peer, ReplayWindow());
    }
  }

  ~ProbeEngineImpl() override {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  absl::Status Open() {
    boost::system::error_code error;
    socket_.open(options_.listen.protocol(), error);
    if (!error) MarkAsNetworkControl();
    if (!error) socket_.bind(options_.listen, error);
    if (error) {
      return absl::UnavailableError(
          absl::StrCat("cannot bind the probe socket to ", options_.listen.address().to_string(), ":",
                       options_.listen.port(), ": ", error.message()));
    }
    local_ = socket_.local_endpoint();
    // The kernel stamps every datagram as it arrives: a probe answered in
    // time is credited in time even when this thread runs late.
    const int on = 1;
    kernel_timestamps_ = setsockopt(socket_.native_handle(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0;
    AwaitDatagrams();
    next_tick_ = Clock::now();
    Tick();
    thread_ = std::thread([this] {
      RaiseToRealtime();
      io_.run();
    });
    return absl::OkStatus();
  }

  // Probing is the network's control plane (BFD runs in real time or in
  // hardware): with `realtime_priority`, this thread runs SCHED_FIFO so that
  // a host busy with other work neither delays answers to its peers nor
  // misses its own ticks. Best effort: without the privilege it probes at
  // normal priority and says so.
  void RaiseToRealtime() {
    if (options_.realtime_priority <= 0) return;
    sched_param param{};
    param.sched_priority = options_.realtime_priority;
    if (const int error = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param); error != 0) {
      daemon::LogWarn("probing at normal priority: real-time scheduling refused",
                      {{"realtime_priority", std::to_string(options_.realtime_priority)},
                       {"error", std::strerror(error)}});
    }
  }

  // Probes are the network's own control traffic: DSCP CS6, which routers
  // schedule ahead of data, and socket priority 6 (TC_PRIO_INTERACTIVE),
  // which a Linux priority qdisc puts in its first band. Where nothing does,
  // a link saturated by traffic drops its own probes and reads as down (the
  // netns lab on Abilene, whose veths have one tbf queue). Best effort: a
  // kernel that refuses either still probes.
  void MarkAsNetworkControl() {
    const int fd = socket_.native_handle();
    const int priority = 6;
    (void)setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &priority, sizeof priority);
    const int class_selector_6 = 0xc0;
    if (options_.listen.address().is_v6()) {
      (void)setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &class_selector_6, sizeof class_selector_6);
    } else {
      (void)setsockopt(fd, IPPROTO_IP, IP_TOS, &class_selector_6, sizeof class_selector_6);
    }
  }

  udp::endpoint local_endpoint() const override { return local_; }

  std::vector<std::pair<std::string, v1::LinkHealth>> Current() const override {
    std::lock_guard lock(mu_);
    std::vector<std::pair<std::string, v1::LinkHealth>> health;
    for (size_t i = 0; i < links_.size(); ++i) health.emplace_back(options_.links[i].id, links_[i].estimator.health());
    return health;
  }

  ProbeCounters counters() const override {
    return ProbeCounters{.requests_sent = requests_sent_,
                         .requests_answered = requests_answered_,
                         .replies_accepted = replies_accepted_,
                         .rejected_unknown_peer = rejected_unknown_peer_,
                         .rejected_malformed = rejected_malformed_,
                         .rejected_replay = rejected_replay_,
                         .rejected_unexpected_reply = rejected_unexpected_reply_};
  }

 private:
  struct Link {
    udp::endpoint peer;
    LinkEstimator estimator;
    uint64_t next_seq = 1;
  };

  // One request per link, then every link judged; the ticks keep to the
  // interval's grid so the probe rate does not drift.
  void Tick() {
    // What arrived while this thread did not run is read first, with the
    // kernel's arrival times: late ticks judge no answered probe lost.
    ReadDatagrams();
    const Clock::time_point now = Clock::now();
    bool changed = false;
    {
      std::lock_guard lock(mu_);
      for (uint32_t i = 0; i < links_.size(); ++i) {
        Link& link = links_[i];
        ProbePacket request{.type = ProbeType::kRequest, .session = session_, .link_tag = i, .seq = link.next_seq++,
                            .t1_ns = Nanos(now)};
        link.estimator.Sent(request.seq, now);
        Send(EncodeProbe(request), link.peer);
        ++requests_sent_;
      }
      for (Link& link : links_) changed |= link.estimator.Update(now);
    }
    if (changed && on_change_) on_change_();
    next_tick_ += options_.estimator.interval;
    if (next_tick_ < now) next_tick_ = now + options_.estimator.interval;  // we fell behind: skip, do not burst
    timer_.expires_at(next_tick_);
    timer_.async_wait([this](const boost::system::error_code& error) {
      if (!error) Tick();
    });
  }

  void Send(const std::array<uint8_t, kProbePacketBytes>& bytes, const udp::endpoint& to) {
    auto buffer = std::make_shared<std::array<uint8_t, kProbePacketBytes>>(bytes);
    socket_.async_send_to(boost::asio::buffer(*buffer), to, [buffer](const boost::system::error_code&, size_t) {});
  }

  void AwaitDatagrams() {
    socket_.async_wait(udp::socket::wait_read, [this](const boost::system::error_code& error) {
      if (error == boost::asio::error::operation_aborted) return;
      ReadDatagrams();
      AwaitDatagrams();
    });
  }

  // Every datagram waiting on the socket, each with its arrival time.
  void ReadDatagrams() {
    while (true) {
      sockaddr_storage from{};
      iovec data{buffer_.data(), buffer_.size()};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
      msghdr message{};
      message.msg_name = &from;
      message.msg_namelen = sizeof from;
      message.msg_iov = &data;
      message.msg_iovlen = 1;
      message.msg_control = control;
      message.msg_controllen = sizeof control;
      const ssize_t bytes = recvmsg(socket_.native_handle(), &message, MSG_DONTWAIT);
      if (bytes < 0) {
        if (errno == EINTR) continue;
        return;  // EAGAIN: nothing more (other errors: the next readiness retries)
      }
      sender_ = udp::endpoint();
      if (message.msg_namelen > sender_.capacity()) continue;
      std::memcpy(sender_.data(), &from, message.msg_namelen);
      sender_.resize(message.msg_namelen);
      Handle(static_cast<size_t>(bytes), ArrivalTime(message));
    }
  }

  // The kernel's receive timestamp (CLOCK_REALTIME) on this thread's
  // steady clock; now when there is none.
  Clock::time_point ArrivalTime(msghdr& message) const {
    const Clock::time_point now = Clock::now();
    if (!kernel_timestamps_) return now;
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr; header = CMSG_NXTHDR(&message, header)) {
      if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_TIMESTAMPNS) continue;
      timespec stamp{};
      std::memcpy(&stamp, CMSG_DATA(header), sizeof stamp);
      timespec real{};
      clock_gettime(CLOCK_REALTIME, &real);
      const auto age = std::chrono::seconds(real.tv_sec - stamp.tv_sec) +
                       std::chrono::nanoseconds(real.tv_nsec - stamp.tv_nsec);
      // A wall clock step makes the age meaningless: then it is now.
      if (age < std::chrono::nanoseconds(0) || age > std::chrono::seconds(10)) return now;
      return now - std::chrono::duration_cast<Clock::duration>(age);
    }
    return now;
  }

  void Handle(size_t bytes, Clock::time_point now) {
    // Nobody but a configured peer gets anything, not even an error.
    auto peer = replay_.find(sender_);
    const bool from_link_peer = std::any_of(links_.begin(), links_.end(), [&](const Link& l) { return l.peer == sender_; });
    if (peer == replay_.end() && !from_link_peer) {
      ++rejected_unknown_peer_;
      return;
    }
    absl::StatusOr<ProbePacket> packet = DecodeProbe(std::span<const uint8_t>(buffer_.data(), bytes));
    if (!packet.ok()) {
      ++rejected_malformed_;
      return;
    }
    if (packet->type == ProbeType::kRequest) {
      if (peer == replay_.end()) {
        ++rejected_unknown_peer_;
        return;
      }
      if (!peer->second.Accept(packet->session, packet->seq)) {
        ++rejected_replay_;
        return;
      }
      packet->type = ProbeType::kReply;
      packet->t2_ns = Nanos(now);
      packet->t3_ns = Nanos(Clock::now());
      Send(EncodeProbe(*packet), sender_);
      ++requests_answered_;
      return;
    }
    bool changed = false;
    std::optional<std::chrono::nanoseconds> rtt;
    {
      std::lock_guard lock(mu_);
      if (packet->session == session_ && packet->link_tag < links_.size() && links_[packet->link_tag].peer == sender_) {
        rtt = links_[packet->link_tag].estimator.Answered(packet->seq, now,
                                                          std::chrono::nanoseconds(packet->t3_ns - packet->t2_ns));
      }
      if (!rtt) {
        ++rejected_unexpected_reply_;
        return;
      }
      ++replies_accepted_;
      // An answer can end a "down" at once (subject to the hold-down).
      changed = links_[packet->link_tag].estimator.Update(now);
    }
    if (options_.on_rtt) options_.on_rtt(packet->link_tag, *rtt);
    if (changed && on_change_) on_change_();
  }

  const ProbeEngineOptions options_;
  const StateChanged on_change_;
  boost::asio::io_context io_;
  udp::socket socket_;
  boost::asio::steady_timer timer_;
  udp::endpoint local_, sender_;
  std::array<uint8_t, 2048> buffer_{};
  Clock::time_point next_tick_;
  uint64_t session_ = 0;
  std::map<udp::endpoint, ReplayWindow> replay_;  // by peer allowed to probe us
  mutable std::mutex mu_;                         // guards links_' estimators
  std::vector<Link> links_;
  bool kernel_timestamps_ = false;
  std::atomic<uint64_t> requests_sent_{0}, requests_answered_{0}, replies_accepted_{0}, rejected_unknown_peer_{0},
      rejected_malformed_{0}, rejected_replay_{0}, rejected_unexpected_reply_{0};
  std::thread thread_;
};

}  // namespace

absl::StatusOr<udp::endpoint> ParseUdpEndpoint(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": expected HOST:PORT"));
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  boost::system::error_code error;
  const boost::asio::ip::address address = boost::asio::ip::make_address(host, error);
  uint32_t port = 0;
  if (error || !absl::SimpleAtoi(text.substr(colon + 1), &port) || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": expected an IP address and a port"));
  }
  return udp::endpoint(address, static_cast<uint16_t>(port));
}

absl::StatusOr<std::unique_ptr<ProbeEngine>> ProbeEngine::Start(ProbeEngineOptions options, StateChanged on_change) {
  if (options.estimator.interval.count() <= 0 || options.estimator.detect_multiplier < 1 ||
      options.estimator.window < 1) {
    return absl::InvalidArgumentError("probe interval, detect multiplier and window must be positive");
  }
  for (const ProbedLink& link : options.links) {
    if (link.peer.port() == 0) return absl::InvalidArgumentError(absl::StrCat("link ", link.id, ": the peer needs a port"));
  }
  auto engine = std::make_unique<ProbeEngineImpl>(std::move(options), std::move(on_change));
  if (absl::Status opened = engine->Open(); !opened.ok()) return opened;
  return engine;
}

}  // namespace geodesic::site_agent::probe
