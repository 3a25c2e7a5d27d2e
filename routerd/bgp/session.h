#pragma once
// One BGP session from routerd to a configured router (RFC 4271 FSM, active
// side only: routerd connects out and never listens, so only configured peers
// ever talk to it). Announces the speaker's paths, keeps what it has sent
// (Adj-RIB-Out) and sends only differences; resends everything on ROUTE-REFRESH
// and after reconnecting, then End-of-RIB (graceful restart, RFC 4724).
// Routes the peer sends are validated (RFC 7606) and counted against
// max-prefix, never installed.
// Not thread-safe: every call and handler runs on the speaker's io_context thread.
#include <chrono>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include "routerd/bgp/message.h"
#include "routerd/bgp/rib_out.h"

namespace geodesic::routerd::bgp {

struct PeerConfig {
  IpAddress address;
  uint16_t port = 179;
  uint32_t remote_as = 0;
  std::optional<IpAddress> local_address;
  std::string password;          // TCP-MD5 (RFC 2385) when set
  uint32_t max_prefixes = 10000; // routes the peer may send us before we Cease
  uint16_t hold_time_s = 90;     // 0 or >= 3
  bool ttl_security = false;     // GTSM (RFC 5082): send TTL 255, accept only 255
};

struct SessionSettings {
  uint32_t local_as = 0;
  uint32_t router_id = 0;             // host order
  uint16_t graceful_restart_s = 120;  // how long peers keep our routes when we vanish
  bool restarting = false;            // R bit: we came back with our routes still on the peers
  std::chrono::milliseconds connect_retry_min{250};
  std::chrono::milliseconds connect_retry_max{30000};
};

struct PeerStatus {
  std::string peer;  // "address:port"
  std::string state;
  uint64_t established_count = 0;
  uint64_t updates_sent = 0;
  uint64_t prefixes_announced = 0;  // announcements sent (a prefix announced again counts again)
  uint64_t prefixes_withdrawn = 0;
  uint64_t prefixes_advertised = 0;  // in the Adj-RIB-Out now: what the peer has from us
  uint64_t updates_received = 0;
  uint64_t treat_as_withdraw = 0;   // RFC 7606 outcomes on received UPDATEs
  uint64_t attributes_discarded = 0;
  uint64_t notifications_sent = 0;
  uint64_t notifications_received = 0;
  uint64_t prefixes_received = 0;   // currently held from the peer
  std::string last_error;
  bool add_path_ipv4 = false;
  bool add_path_ipv6 = false;
};

class BgpSession : public std::enable_shared_from_this<BgpSession> {
 public:
  enum class State { kIdle, kConnect, kOpenSent, kOpenConfirm, kEstablished };

  BgpSession(boost::asio::io_context& io, const SessionSettings& settings, PeerConfig peer,
             const PathsByPrefix& routes);

  void Start();
  // Closes without NOTIFICATION: with graceful restart the peer keeps our
  // routes (fail-static across a routerd restart).
  void Stop();
  // The speaker's paths changed for these prefixes.
  void RoutesChanged(const std::vector<IpPrefix>& dirty);
  PeerStatus status() const;
  State state() const { return state_; }
  // Established, and every change of the speaker's paths is written to the
  // socket (nothing dirty, nothing queued or in flight).
  bool AllSent() const {
    return state_ == State::kEstablished && dirty_.empty() && flushing_at_ == flushing_.size() && tx_.empty();
  }

 private:
  void Connect();
  void OnConnected(const boost::system::error_code& error);
  void ScheduleReconnect(std::chrono::milliseconds delay);
  void Read();
  void OnRead(const boost::system::error_code& error, size_t bytes);
  // False when the session ended while handling the message.
  bool Handle(const Message& message);
  bool HandleOpen(const OpenMessage& open);
  bool HandleUpdate(const DecodedUpdate& update);
  void BecomeEstablished();
  void SendAll(std::optional<Family> only);
  void Flush();
  void Send(std::vector<uint8_t> message);
  void WriteMore();
  void Fail(BgpError error);  // NOTIFICATION, close, reconnect later
  void Close(const std::string& why, std::chrono::milliseconds reconnect_after);
  void RestartHoldTimer();
  void StartKeepalives();
  PathAttributes Decorate(const PathAttributes& attributes) const;
  std::vector<Family> NegotiatedFamilies() const;
  std::string Name() const;

  boost::asio::io_context& io_;
  const SessionSettings& settings_;
  const PeerConfig peer_;
  const PathsByPrefix& routes_;

  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer connect_timer_;
  boost::asio::steady_timer hold_timer_;
  boost::asio::steady_timer keepalive_timer_;
  uint64_t generation_ = 0;  // bumps on every close; stale handlers check it
  State state_ = State::kIdle;
  bool stopped_ = false;
  std::chrono::milliseconds backoff_;

  std::vector<uint8_t> rx_;
  size_t rx_used_ = 0;
  std::deque<std::vector<uint8_t>> tx_;
  size_t tx_in_flight_ = 0;
  bool closing_after_write_ = false;

  DecodeContext decode_;
  PeerView view_;
  bool four_octet_as_ = true;
  uint16_t hold_time_s_ = 0;
  std::set<AfiSafi> families_;
  PathsByPrefix sent_;
  std::vector<IpPrefix> dirty_;        // changed since the last Flush took them
  // What Flush is sending, sorted and unique, kFlushChunk prefixes per turn of
  // the io_context, so the socket writes the first UPDATEs while the rest are
  // still being built; [flushing_at_, end) is still to do.
  std::vector<IpPrefix> flushing_;
  size_t flushing_at_ = 0;
  bool flush_posted_ = false;          // a Flush continuation is queued
  bool end_of_rib_pending_ = false;    // sent once the initial table has been flushed
  std::set<Nlri> received_;
  PeerStatus counters_;
};

// The RFC 4271 name of a session state ("Idle" ... "Established"), as
// PeerStatus::state has it.
const char* StateName(BgpSession::State state);
inline constexpr BgpSession::State kSessionStates[] = {
    BgpSession::State::kIdle, BgpSession::State::kConnect, BgpSession::State::kOpenSent,
    BgpSession::State::kOpenConfirm, BgpSession::State::kEstablished};

}  // namespace geodesic::routerd::bgp
