#include "routerd/bgp/session.h"

#include <netinet/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <random>

#include "daemon/log.h"

namespace geodesic::routerd::bgp {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr auto kOpenHoldTime = 240s;          // RFC 4271: a large value until OPEN arrives
constexpr auto kConnectTimeout = 5s;
constexpr auto kMaxPrefixIdle = 60s;          // after a max-prefix Cease, wait before retrying
constexpr size_t kWriteBatch = 64;            // messages gathered into one write
// Prefixes diffed and packed per turn of the io_context: about ten UPDATEs,
// small enough that the first ones are on the wire at once (the peer starts
// on them while the rest are built), large enough to keep messages full.
constexpr size_t kFlushChunk = 4096;

asio::ip::address ToAsio(const IpAddress& address) {
  if (address.family == Family::kIpv4) {
    asio::ip::address_v4::bytes_type bytes;
    std::copy_n(address.bytes.begin(), 4, bytes.begin());
    return asio::ip::address_v4(bytes);
  }
  asio::ip::address_v6::bytes_type bytes;
  std::copy_n(address.bytes.begin(), 16, bytes.begin());
  return asio::ip::address_v6(bytes);
}

std::chrono::milliseconds Jittered(std::chrono::milliseconds delay) {
  thread_local std::mt19937 random{std::random_device{}()};
  std::uniform_real_distribution<double> factor(0.75, 1.0);  // RFC 4271 9.2.1.3 jitter
  return std::chrono::milliseconds(static_cast<int64_t>(delay.count() * factor(random)));
}

}  // namespace

const char* StateName(BgpSession::State state) {
  switch (state) {
    case BgpSession::State::kIdle: return "Idle";
    case BgpSession::State::kConnect: return "Connect";
    case BgpSession::State::kOpenSent: return "OpenSent";
    case BgpSession::State::kOpenConfirm: return "OpenConfirm";
    case BgpSession::State::kEstablished: return "Established";
  }
  return "?";
}

BgpSession::BgpSession(asio::io_context& io, const SessionSettings& settings, PeerConfig peer,
                       const PathsByPrefix& routes)
    : io_(io),
      settings_(settings),
      peer_(std::move(peer)),
      routes_(routes),
      socket_(io),
      connect_timer_(io),
      hold_timer_(io),
      keepalive_timer_(io),
      backoff_(settings.connect_retry_min) {
  counters_.peer = Name();
}

std::string BgpSession::Name() const {
  return peer_.address.ToString() + ":" + std::to_string(peer_.port);
}

void BgpSession::Start() {
  stopped_ = false;
  Connect();
}

void BgpSession::Stop() {
  stopped_ = true;
  Close("routerd stopping", 0ms);
}

void BgpSession::Connect() {
  if (stopped_) return;
  state_ = State::kConnect;
  boost::system::error_code error;
  const tcp::endpoint remote(ToAsio(peer_.address), peer_.port);
  socket_.open(remote.protocol(), error);
  if (!error && peer_.local_address) socket_.bind(tcp::endpoint(ToAsio(*peer_.local_address), 0), error);
  if (!error && !peer_.password.empty()) {
    tcp_md5sig md5{};
    std::memcpy(&md5.tcpm_addr, remote.data(), remote.size());
    md5.tcpm_keylen = static_cast<uint16_t>(peer_.password.size());
    std::memcpy(md5.tcpm_key, peer_.password.data(), std::min(peer_.password.size(), sizeof md5.tcpm_key));
    if (setsockopt(socket_.native_handle(), IPPROTO_TCP, TCP_MD5SIG, &md5, sizeof md5) != 0) {
      error = boost::system::error_code(errno, boost::system::system_category());
    }
  }
  if (!error && peer_.ttl_security) {
    const int ttl = 255, min_ttl = 254;
    const bool v4 = peer_.address.family == Family::kIpv4;
    if (setsockopt(socket_.native_handle(), v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_TTL : IPV6_UNICAST_HOPS, &ttl,
                   sizeof ttl) != 0 ||
        setsockopt(socket_.native_handle(), v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_MINTTL : IPV6_MINHOPCOUNT,
                   &min_ttl, sizeof min_ttl) != 0) {
      error = boost::system::error_code(errno, boost::system::system_category());
    }
  }
  if (error) {
    Close("cannot prepare the socket: " + error.message(), backoff_);
    return;
  }
  socket_.set_option(tcp::no_delay(true), error);
  const uint64_t generation = generation_;
  connect_timer_.expires_after(kConnectTimeout);
  connect_timer_.async_wait([self = shared_from_this(), generation](const boost::system::error_code& error) {
    if (!error && generation == self->generation_ && self->state_ == State::kConnect) self->socket_.cancel();
  });
  socket_.async_connect(remote, [self = shared_from_this(), generation](const boost::system::error_code& error) {
    if (generation == self->generation_) self->OnConnected(error);
  });
}

void BgpSession::OnConnected(const boost::system::error_code& error) {
  connect_timer_.cancel();
  if (error) {
    Close("connect: " + error.message(), backoff_);
    return;
  }
  state_ = State::kOpenSent;
  OpenMessage open{.version = 4, .as_number = settings_.local_as, .hold_time_s = peer_.hold_time_s,
                   .bgp_id = settings_.router_id, .capabilities = {}};
  Capabilities& caps = open.capabilities;
  caps.multiprotocol = {{kAfiIpv4, kSafiUnicast}, {kAfiIpv6, kSafiUnicast}};
  caps.four_octet_as = settings_.local_as;
  caps.route_refresh = true;
  caps.add_path = {{.family = {kAfiIpv4, kSafiUnicast}, .send_receive = kAddPathSend},
                   {.family = {kAfiIpv6, kSafiUnicast}, .send_receive = kAddPathSend}};
  caps.graceful_restart = GracefulRestart{
      .restarting = settings_.restarting,
      .restart_time_s = settings_.graceful_restart_s,
      .families = {{.family = {kAfiIpv4, kSafiUnicast}, .forwarding_preserved = true},
                   {.family = {kAfiIpv6, kSafiUnicast}, .forwarding_preserved = true}}};
  rx_.assign(2 * kMaxMessageBytes, 0);
  rx_used_ = 0;
  Send(EncodeOpen(open));
  hold_timer_.expires_after(kOpenHoldTime);
  const uint64_t generation = generation_;
  hold_timer_.async_wait([self = shared_from_this(), generation](const boost::system::error_code& error) {
    if (error || generation != self->generation_) return;
    self->Fail({.code = error::kHoldTimerExpired, .subcode = 0, .data = {}, .reason = "no OPEN from the peer"});
  });
  Read();
}

void BgpSession::Read() {
  if (rx_.size() - rx_used_ < kMaxMessageBytes) rx_.resize(rx_used_ + 2 * kMaxMessageBytes);
  const uint64_t generation = generation_;
  socket_.async_read_some(asio::buffer(rx_.data() + rx_used_, rx_.size() - rx_used_),
                          [self = shared_from_this(), generation](const boost::system::error_code& error, size_t bytes) {
                            if (generation == self->generation_) self->OnRead(error, bytes);
                          });
}

void BgpSession::OnRead(const boost::system::error_code& error, size_t bytes) {
  if (closing_after_write_) return;  // a NOTIFICATION is on its way out
  if (error) {
    Close(error == asio::error::eof ? "peer closed the connection" : "read: " + error.message(), backoff_);
    return;
  }
  rx_used_ += bytes;
  size_t consumed = 0;
  const uint64_t generation = generation_;
  while (true) {
    const std::span<const uint8_t> pending(rx_.data() + consumed, rx_used_ - consumed);
    auto framed = FrameLength(pending);
    if (auto* bad = std::get_if<BgpError>(&framed)) {
      Fail(*bad);
      return;
    }
    const size_t length = std::get<size_t>(framed);
    if (length == 0) break;
    auto decoded = DecodeMessage(pending.first(length), decode_);
    consumed += length;
    if (auto* bad = std::get_if<BgpError>(&decoded)) {
      Fail(*bad);
      return;
    }
    if (!Handle(std::get<Message>(decoded)) || generation != generation_) return;
  }
  std::memmove(rx_.data(), rx_.data() + consumed, rx_used_ - consumed);
  rx_used_ -= consumed;
  Read();
}

bool BgpSession::Handle(const Message& message) {
  RestartHoldTimer();
  if (const auto* open = std::get_if<OpenMessage>(&message)) return HandleOpen(*open);
  if (const auto* notification = std::get_if<NotificationMessage>(&message)) {
    ++counters_.notifications_received;
    Close("peer sent NOTIFICATION: " + DescribeNotification(notification->code, notification->subcode), backoff_);
    return false;
  }
  if (std::holds_alternative<KeepaliveMessage>(message)) {
    if (state_ == State::kOpenConfirm) BecomeEstablished();
    else if (state_ != State::kEstablished) {
      Fail({.code = error::kFsm, .subcode = 1, .data = {}, .reason = "KEEPALIVE before OPEN"});
      return false;
    }
    return true;
  }
  if (state_ != State::kEstablished) {
    Fail({.code = error::kFsm, .subcode = static_cast<uint8_t>(state_ == State::kOpenSent ? 1 : 2), .data = {},
          .reason = "UPDATE or ROUTE-REFRESH before the session is established"});
    return false;
  }
  if (const auto* update = std::get_if<DecodedUpdate>(&message)) return HandleUpdate(*update);
  const auto& refresh = std::get<RouteRefreshMessage>(message);
  if (families_.contains(refresh.family)) {
    daemon::LogInfo("bgp route refresh", {{"peer", Name()}, {"afi", std::to_string(refresh.family.afi)}});
    SendAll(refresh.family.afi == kAfiIpv4 ? Family::kIpv4 : Family::kIpv6);
  }
  return true;
}

bool BgpSession::HandleOpen(const OpenMessage& open) {
  if (state_ != State::kOpenSent) {
    Fail({.code = error::kFsm, .subcode = static_cast<uint8_t>(state_ == State::kOpenConfirm ? 2 : 3), .data = {},
          .reason = "OPEN in state " + std::string(StateName(state_))});
    return false;
  }
  if (open.as_number != peer_.remote_as) {
    Fail({.code = error::kOpen, .subcode = error::kBadPeerAs, .data = {},
          .reason = "peer AS " + std::to_string(open.as_number) + ", configured " + std::to_string(peer_.remote_as)});
    return false;
  }
  if (open.bgp_id == settings_.router_id && peer_.remote_as == settings_.local_as) {
    Fail({.code = error::kOpen, .subcode = error::kBadBgpId, .data = {}, .reason = "peer uses our BGP identifier"});
    return false;
  }
  const Capabilities& caps = open.capabilities;
  four_octet_as_ = caps.four_octet_as.has_value();
  hold_time_s_ = std::min(open.hold_time_s, peer_.hold_time_s);
  families_.clear();
  if (caps.multiprotocol.empty()) families_.insert({kAfiIpv4, kSafiUnicast});
  for (const AfiSafi& family : caps.multiprotocol) {
    if (family.safi == kSafiUnicast && (family.afi == kAfiIpv4 || family.afi == kAfiIpv6)) families_.insert(family);
  }
  view_ = {};
  decode_ = DecodeContext{.four_octet_as = four_octet_as_, .add_path_ipv4 = false, .add_path_ipv6 = false,
                          .external_peer = peer_.remote_as != settings_.local_as};
  for (const AddPathFamily& entry : caps.add_path) {
    if (entry.family.safi != kSafiUnicast || !(entry.send_receive & kAddPathReceive)) continue;
    if (entry.family.afi == kAfiIpv4) view_.add_path_ipv4 = true;
    if (entry.family.afi == kAfiIpv6) view_.add_path_ipv6 = true;
  }
  counters_.add_path_ipv4 = view_.add_path_ipv4;
  counters_.add_path_ipv6 = view_.add_path_ipv6;
  // We never advertise ADD-PATH receive, so the peer sends no path identifiers.
  state_ = State::kOpenConfirm;
  Send(EncodeKeepalive());
  RestartHoldTimer();
  return true;
}

bool BgpSession::HandleUpdate(const DecodedUpdate& decoded) {
  ++counters_.updates_received;
  if (decoded.treat_as_withdraw) {
    ++counters_.treat_as_withdraw;
    daemon::LogWarn("bgp update treated as withdraw (RFC 7606)",
                    {{"peer", Name()}, {"why", decoded.problems.empty() ? "" : decoded.problems.front()}});
  } else if (!decoded.problems.empty()) {
    counters_.attributes_discarded += decoded.problems.size();
    daemon::LogWarn("bgp attribute discarded (RFC 7606)", {{"peer", Name()}, {"why", decoded.problems.front()}});
  }
  for (const Nlri& nlri : decoded.update.withdrawn) received_.erase(nlri);
  for (const Nlri& nlri : decoded.update.announced) received_.insert(nlri);
  counters_.prefixes_received = received_.size();
  if (received_.size() > peer_.max_prefixes) {
    const uint32_t max = peer_.max_prefixes;
    const AfiSafi family = decoded.update.announced.back().prefix.family == Family::kIpv4
                               ? AfiSafi{kAfiIpv4, kSafiUnicast}
                               : AfiSafi{kAfiIpv6, kSafiUnicast};
    Fail({.code = error::kCease, .subcode = error::kMaxPrefixes,
          .data = {static_cast<uint8_t>(family.afi >> 8), static_cast<uint8_t>(family.afi), family.safi,
                   static_cast<uint8_t>(max >> 24), static_cast<uint8_t>(max >> 16), static_cast<uint8_t>(max >> 8),
                   static_cast<uint8_t>(max)},
          .reason = "peer sent more than max_prefixes " + std::to_string(max) + " routes"});
    return false;
  }
  return true;
}

void BgpSession::BecomeEstablished() {
  state_ = State::kEstablished;
  backoff_ = settings_.connect_retry_min;
  ++counters_.established_count;
  daemon::LogInfo("bgp session established",
                  {{"peer", Name()}, {"hold_time_s", std::to_string(hold_time_s_)},
                   {"add_path", view_.add_path_ipv4 && view_.add_path_ipv6 ? "ipv4,ipv6"
                                : view_.add_path_ipv4                         ? "ipv4"
                                : view_.add_path_ipv6                         ? "ipv6"
                                                                              : "none"},
                   {"routes", std::to_string(routes_.size())}});
  StartKeepalives();
  end_of_rib_pending_ = true;  // Flush sends it after the last of the table
  SendAll(std::nullopt);
}

std::vector<Family> BgpSession::NegotiatedFamilies() const {
  std::vector<Family> families;
  if (families_.contains({kAfiIpv4, kSafiUnicast})) families.push_back(Family::kIpv4);
  if (families_.contains({kAfiIpv6, kSafiUnicast})) families.push_back(Family::kIpv6);
  return families;
}

void BgpSession::SendAll(std::optional<Family> only) {
  for (auto it = sent_.begin(); it != sent_.end();) {
    if (!only || it->first.family == *only) it = sent_.erase(it);
    else ++it;
  }
  for (const auto& [prefix, paths] : routes_) {
    if (!only || prefix.family == *only) dirty_.push_back(prefix);
  }
  Flush();
}

void BgpSession::RoutesChanged(const std::vector<IpPrefix>& dirty) {
  if (state_ != State::kEstablished) return;  // establishment sends everything
  dirty_.insert(dirty_.end(), dirty.begin(), dirty.end());
  if (!flush_posted_) Flush();  // else the queued continuation takes them
}

PathAttributes BgpSession::Decorate(const PathAttributes& attributes) const {
  PathAttributes sent = attributes;
  if (peer_.remote_as == settings_.local_as) {
    sent.as_path = std::vector<AsPathSegment>{};
    sent.local_pref = 100;
  } else {
    sent.as_path = std::vector<AsPathSegment>{{.type = 2, .as_numbers = {settings_.local_as}}};
  }
  return sent;
}

void BgpSession::Flush() {
  if (state_ != State::kEstablished) return;
  if (flushing_at_ == flushing_.size() && !dirty_.empty()) {
    flushing_.clear();
    flushing_.swap(dirty_);
    flushing_at_ = 0;
    std::sort(flushing_.begin(), flushing_.end());
    flushing_.erase(std::unique(flushing_.begin(), flushing_.end()), flushing_.end());
    std::erase_if(flushing_, [&](const IpPrefix& prefix) {
      return !families_.contains({AfiOf(prefix.family), kSafiUnicast});
    });
  }
  if (flushing_at_ < flushing_.size()) {
    const size_t end = std::min(flushing_.size(), flushing_at_ + kFlushChunk);
    const std::vector<IpPrefix> chunk(flushing_.begin() + static_cast<ptrdiff_t>(flushing_at_),
                                      flushing_.begin() + static_cast<ptrdiff_t>(end));
    flushing_at_ = end;
    OutboundChanges changes;
    DiffPaths(routes_, chunk, view_, sent_, changes);
    const AttributeDecorator decorate = [this](const PathAttributes& attributes) { return Decorate(attributes); };
    for (Family family : {Family::kIpv4, Family::kIpv6}) {
      const FamilyChanges& family_changes = changes.of(family);
      if (family_changes.empty()) continue;
      counters_.prefixes_announced += family_changes.announced_count();
      counters_.prefixes_withdrawn += family_changes.withdrawn.size();
      const EncodeContext context{.four_octet_as = four_octet_as_, .add_path = view_.add_path(family)};
      for (auto& message : PackUpdates(family, family_changes, context, decorate)) {
        ++counters_.updates_sent;
        Send(std::move(message));
      }
    }
  }
  if (flushing_at_ == flushing_.size() && end_of_rib_pending_) {
    end_of_rib_pending_ = false;
    for (const AfiSafi& family : families_) Send(EncodeEndOfRib(family));
  }
  if ((flushing_at_ < flushing_.size() || !dirty_.empty()) && !flush_posted_) {
    // Let the writes (and reads: keepalives, the hold timer) run between chunks.
    flush_posted_ = true;
    const uint64_t generation = generation_;
    asio::post(io_, [self = shared_from_this(), generation] {
      if (generation != self->generation_) return;
      self->flush_posted_ = false;
      self->Flush();
    });
  }
}

void BgpSession::Send(std::vector<uint8_t> message) {
  tx_.push_back(std::move(message));
  if (tx_in_flight_ == 0) WriteMore();
}

void BgpSession::WriteMore() {
  if (tx_.empty() || !socket_.is_open()) return;
  std::vector<asio::const_buffer> buffers;
  for (size_t i = 0; i < tx_.size() && i < kWriteBatch; ++i) buffers.push_back(asio::buffer(tx_[i]));
  tx_in_flight_ = buffers.size();
  const uint64_t generation = generation_;
  asio::async_write(socket_, buffers, [self = shared_from_this(), generation](const boost::system::error_code& error, size_t) {
    if (generation != self->generation_) return;
    for (size_t i = 0; i < self->tx_in_flight_; ++i) self->tx_.pop_front();
    self->tx_in_flight_ = 0;
    if (error) {
      self->Close("write: " + error.message(), self->backoff_);
      return;
    }
    if (self->closing_after_write_ && self->tx_.empty()) {
      self->Close(self->counters_.last_error, self->backoff_);
      return;
    }
    self->WriteMore();
  });
}

void BgpSession::Fail(BgpError error) {
  ++counters_.notifications_sent;
  counters_.last_error = error.reason;
  daemon::LogWarn("bgp session error; sending NOTIFICATION",
                  {{"peer", Name()}, {"notification", DescribeNotification(error.code, error.subcode)},
                   {"why", error.reason}});
  if (error.code == error::kCease && error.subcode == error::kMaxPrefixes) backoff_ = kMaxPrefixIdle;
  // Only the NOTIFICATION goes out; queued updates are dropped.
  while (tx_.size() > tx_in_flight_) tx_.pop_back();
  closing_after_write_ = true;
  state_ = State::kIdle;
  hold_timer_.cancel();
  keepalive_timer_.cancel();
  Send(EncodeNotification({.code = error.code, .subcode = error.subcode, .data = error.data}));
}

void BgpSession::Close(const std::string& why, std::chrono::milliseconds reconnect_after) {
  ++generation_;
  const bool was_established = state_ == State::kEstablished;
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  socket_ = tcp::socket(io_);
  connect_timer_.cancel();
  hold_timer_.cancel();
  keepalive_timer_.cancel();
  tx_.clear();
  tx_in_flight_ = 0;
  closing_after_write_ = false;
  sent_.clear();
  received_.clear();
  dirty_.clear();
  flushing_.clear();
  flushing_at_ = 0;
  flush_posted_ = false;
  end_of_rib_pending_ = false;
  counters_.prefixes_received = 0;
  state_ = State::kIdle;
  if (!why.empty()) counters_.last_error = why;
  if (was_established) {
    daemon::LogWarn("bgp session down", {{"peer", Name()}, {"why", why}});
  }
  if (stopped_) return;
  ScheduleReconnect(reconnect_after);
}

void BgpSession::ScheduleReconnect(std::chrono::milliseconds delay) {
  const uint64_t generation = generation_;
  connect_timer_.expires_after(Jittered(delay));
  connect_timer_.async_wait([self = shared_from_this(), generation](const boost::system::error_code& error) {
    if (!error && generation == self->generation_ && !self->stopped_) self->Connect();
  });
  backoff_ = std::min(settings_.connect_retry_max, std::max(settings_.connect_retry_min, backoff_ * 2));
}

void BgpSession::RestartHoldTimer() {
  if (state_ == State::kOpenSent) return;  // the pre-OPEN timer runs until OPEN
  if (hold_time_s_ == 0) {
    hold_timer_.cancel();
    return;
  }
  hold_timer_.expires_after(std::chrono::seconds(hold_time_s_));
  const uint64_t generation = generation_;
  hold_timer_.async_wait([self = shared_from_this(), generation](const boost::system::error_code& error) {
    if (error || generation != self->generation_) return;
    self->Fail({.code = error::kHoldTimerExpired, .subcode = 0, .data = {}, .reason = "hold timer expired"});
  });
}

void BgpSession::StartKeepalives() {
  if (hold_time_s_ == 0) return;
  const uint64_t generation = generation_;
  keepalive_timer_.expires_after(std::chrono::milliseconds(hold_time_s_ * 1000 / 3));
  keepalive_timer_.async_wait([self = shared_from_this(), generation](const boost::system::error_code& error) {
    if (error || generation != self->generation_) return;
    self->Send(EncodeKeepalive());
    self->StartKeepalives();
  });
}

PeerStatus BgpSession::status() const {
  PeerStatus status = counters_;
  status.state = StateName(state_);
  status.prefixes_advertised = sent_.size();
  return status;
}

}  // namespace geodesic::routerd::bgp
