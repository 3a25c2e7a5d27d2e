// routerd's BGP session against a scripted peer on loopback (the test plays the
// router): every RFC 7606 class of malformed UPDATE, header and OPEN errors,
// FSM errors, max-prefix and hold time — the session does what the RFCs say,
// and the speaker never crashes and reconnects after every reset.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "routerd/bgp/speaker.h"

namespace geodesic::routerd::bgp {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kPeerAs = 65000, kOurAs = 65001;

// One path attribute: flags, type, one-octet length, value. Sized once and
// filled in place: growing a 3-byte vector by insert() makes GCC 12 at -O2
// warn -Warray-bounds inside libstdc++'s relocation (a known GCC 12 false positive).
std::vector<uint8_t> Attr(uint8_t flags, uint8_t type, const std::vector<uint8_t>& value) {
  std::vector<uint8_t> a(3 + value.size());
  a[0] = flags;
  a[1] = type;
  a[2] = static_cast<uint8_t>(value.size());
  std::copy(value.begin(), value.end(), a.begin() + 3);
  return a;
}

std::vector<uint8_t> RawUpdate(const std::vector<uint8_t>& attributes, const std::vector<uint8_t>& nlri) {
  std::vector<uint8_t> m(16, 0xff);
  const size_t length = kHeaderBytes + 4 + attributes.size() + nlri.size();
  m.insert(m.end(), {static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length), 2, 0, 0,
                     static_cast<uint8_t>(attributes.size() >> 8), static_cast<uint8_t>(attributes.size())});
  m.insert(m.end(), attributes.begin(), attributes.end());
  m.insert(m.end(), nlri.begin(), nlri.end());
  return m;
}

std::vector<uint8_t> Cat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

const std::vector<uint8_t> kOrigin = Attr(0x40, 1, {0});
const std::vector<uint8_t> kAsPath = Attr(0x40, 2, {2, 1, 0, 0, 0xfd, 0xe8});  // [65000]
const std::vector<uint8_t> kNextHop = Attr(0x40, 3, {127, 0, 0, 1});

// The router side of one TCP connection, with blocking reads under a deadline.
class ScriptedPeer {
 public:
  ScriptedPeer() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof sin;
    const int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
    listen(listen_fd_, 4);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sin), &length);
    port_ = ntohs(sin.sin_port);
  }
  ~ScriptedPeer() {
    CloseConnection();
    close(listen_fd_);
  }
  uint16_t port() const { return port_; }

  bool Accept(std::chrono::milliseconds timeout = 5s) {
    CloseConnection();
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
    fd_ = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    buffer_.clear();
    return fd_ >= 0;
  }
  void CloseConnection() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  void Send(const std::vector<uint8_t>& bytes) { ASSERT_EQ(write(fd_, bytes.data(), bytes.size()), ssize_t(bytes.size())); }

  // The next message routerd sends, skipping KEEPALIVEs unless asked for;
  // nullopt when the connection closed or nothing came in time.
  std::optional<Message> Next(bool skip_keepalives = true, std::chrono::milliseconds timeout = 5s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      auto framed = FrameLength(buffer_);
      if (auto* length = std::get_if<size_t>(&framed); length != nullptr && *length > 0) {
        auto decoded = DecodeMessage(std::span(buffer_).first(*length), {});
        buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<long>(*length));
        if (!std::holds_alternative<Message>(decoded)) return std::nullopt;
        Message message = std::get<Message>(decoded);
        if (skip_keepalives && std::holds_alternative<KeepaliveMessage>(message)) continue;
        return message;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) != 1) return std::nullopt;
      uint8_t chunk[8192];
      const ssize_t n = read(fd_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.insert(buffer_.end(), chunk, chunk + n);
    }
  }

  // True when routerd closed the connection (after any NOTIFICATION).
  bool Closed(std::chrono::milliseconds timeout = 5s) {
    while (auto message = Next(true, timeout)) {
    }
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) != 1) return false;
    uint8_t byte;
    return read(fd_, &byte, 1) == 0;
  }

  // OPEN both ways and KEEPALIVE both ways.
  ::testing::AssertionResult Establish(uint16_t hold_time_s = 9) {
    if (!Accept()) return ::testing::AssertionFailure() << "routerd did not connect";
    auto open = Next();
    if (!open || !std::holds_alternative<OpenMessage>(*open)) return ::testing::AssertionFailure() << "no OPEN";
    OpenMessage ours{.version = 4, .as_number = kPeerAs, .hold_time_s = hold_time_s, .bgp_id = 0x7f000001,
                     .capabilities = {}};
    ours.capabilities.multiprotocol = {{kAfiIpv4, kSafiUnicast}, {kAfiIpv6, kSafiUnicast}};
    ours.capabilities.four_octet_as = kPeerAs;
    ours.capabilities.route_refresh = true;
    Send(EncodeOpen(ours));
    Send(EncodeKeepalive());
    auto keepalive = Next(false);
    if (!keepalive || !std::holds_alternative<KeepaliveMessage>(*keepalive)) {
      return ::testing::AssertionFailure() << "no KEEPALIVE";
    }
    return ::testing::AssertionSuccess();
  }

 private:
  int listen_fd_ = -1;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::vector<uint8_t> buffer_;
};

class BgpSessionTest : public ::testing::Test {
 protected:
  void StartSpeaker(uint32_t max_prefixes = 100) {
    SpeakerConfig config;
    config.session = {.local_as = kOurAs, .router_id = 0x7f000002, .graceful_restart_s = 120, .restarting = false,
                      .connect_retry_min = 50ms, .connect_retry_max = 200ms};
    config.peers = {{.address = *IpAddress::Parse("127.0.0.1"), .port = peer_.port(), .remote_as = kPeerAs,
                     .local_address = std::nullopt, .password = "", .max_prefixes = max_prefixes, .hold_time_s = 9,
                     .ttl_security = false}};
    config.paths.local_as = kOurAs;
    config.paths.next_hops = {{"l1", {.ipv4 = IpAddress::Parse("10.255.0.1"), .ipv6 = std::nullopt}}};
    speaker_ = BgpSpeaker::Start(config);
    v1::ForwardingRoute route;
    route.set_prefix("10.1.0.0/16");
    auto* hop = route.add_next_hops();
    hop->set_link_id("l1");
    hop->set_weight(1);
    RibDiff diff;
    diff.added.push_back(route);
    ASSERT_TRUE(speaker_->Apply(diff).ok());
  }

  // After establishment routerd sends its route and End-of-RIB per family.
  void ExpectInitialRib() {
    auto update = peer_.Next();
    ASSERT_TRUE(update && std::holds_alternative<DecodedUpdate>(*update));
    EXPECT_EQ(std::get<DecodedUpdate>(*update).update.announced.size(), 1u);
    for (int family = 0; family < 2; ++family) {
      auto eor = peer_.Next();
      ASSERT_TRUE(eor && std::holds_alternative<DecodedUpdate>(*eor));
      EXPECT_TRUE(std::get<DecodedUpdate>(*eor).update.end_of_rib);
    }
  }

  // routerd answers with this NOTIFICATION, closes, and comes back.
  void ExpectReset(uint8_t code, uint8_t subcode) {
    auto message = peer_.Next();
    ASSERT_TRUE(message && std::holds_alternative<NotificationMessage>(*message)) << "no NOTIFICATION";
    const auto& notification = std::get<NotificationMessage>(*message);
    EXPECT_EQ(notification.code, code) << DescribeNotification(notification.code, notification.subcode);
    EXPECT_EQ(notification.subcode, subcode) << DescribeNotification(notification.code, notification.subcode);
    EXPECT_TRUE(peer_.Closed());
    ASSERT_TRUE(peer_.Establish());
    ExpectInitialRib();
  }

  // The session is still up: a ROUTE-REFRESH is answered with the route again.
  void ExpectStillUp() {
    peer_.Send(EncodeRouteRefresh({kAfiIpv4, kSafiUnicast}));
    auto update = peer_.Next();
    ASSERT_TRUE(update && std::holds_alternative<DecodedUpdate>(*update)) << "session went down";
    EXPECT_EQ(std::get<DecodedUpdate>(*update).update.announced.size(), 1u);
  }

  ScriptedPeer peer_;
  std::unique_ptr<BgpSpeaker> speaker_;
};

// A table much larger than what the session packs per turn (it sends big
// tables in chunks, writing the first UPDATEs while it builds the rest)
// reaches the peer whole, each prefix once, and only then End-of-RIB.
TEST_F(BgpSessionTest, LargeTableArrivesWholeBeforeEndOfRib) {
  StartSpeaker();
  RibDiff more;
  constexpr int kRoutes = 20'000;
  for (int i = 0; i < kRoutes; ++i) {
    v1::ForwardingRoute& route = more.added.emplace_back();
    route.set_prefix("10." + std::to_string(100 + i / 256 / 256) + "." + std::to_string(i / 256 % 256) + "." +
                     std::to_string(i % 256) + "/32");
    auto* hop = route.add_next_hops();
    hop->set_link_id("l1");
    hop->set_weight(1);
  }
  ASSERT_TRUE(speaker_->Apply(more).ok());
  ASSERT_TRUE(peer_.Establish());
  std::set<IpPrefix> announced;
  int end_of_ribs = 0;
  while (end_of_ribs < 2) {
    auto message = peer_.Next();
    ASSERT_TRUE(message && std::holds_alternative<DecodedUpdate>(*message))
        << "no UPDATE after " << announced.size() << " prefixes";
    const auto& update = std::get<DecodedUpdate>(*message).update;
    if (update.end_of_rib) {
      ++end_of_ribs;
      continue;
    }
    ASSERT_EQ(end_of_ribs, 0) << "a route after End-of-RIB";
    for (const Nlri& nlri : update.announced) {
      EXPECT_TRUE(announced.insert(nlri.prefix).second) << nlri.prefix.ToString() << " sent twice";
    }
  }
  EXPECT_EQ(announced.size(), static_cast<size_t>(kRoutes + 1));
  const auto status = speaker_->Status();
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].prefixes_advertised, static_cast<uint64_t>(kRoutes + 1));
}

TEST_F(BgpSessionTest, TreatAsWithdrawAndAttributeDiscardKeepTheSession) {
  StartSpeaker();
  ASSERT_TRUE(peer_.Establish());
  ExpectInitialRib();
  const std::vector<uint8_t> nlri = {24, 10, 9, 9};
  peer_.Send(RawUpdate(Cat({Attr(0x40, 1, {7}), kAsPath, kNextHop}), nlri));       // invalid ORIGIN
  peer_.Send(RawUpdate(Cat({kOrigin, Attr(0x40, 2, {2, 3, 0}), kNextHop}), nlri));  // malformed AS_PATH
  peer_.Send(RawUpdate(Cat({kOrigin, kAsPath}), nlri));                            // missing NEXT_HOP
  peer_.Send(RawUpdate(Cat({kOrigin, kAsPath, kNextHop, Attr(0xc0, 7, {1, 2, 3})}), nlri));  // bad AGGREGATOR
  peer_.Send(RawUpdate(Cat({kOrigin, kAsPath, kNextHop, Attr(0x40, 5, {0, 0, 0, 9})}), nlri));  // eBGP LOCAL_PREF
  ExpectStillUp();
  const auto status = speaker_->Status();
  EXPECT_EQ(status[0].treat_as_withdraw, 3u);
  EXPECT_EQ(status[0].attributes_discarded, 2u);
  EXPECT_EQ(status[0].prefixes_received, 1u);  // the two discard cases kept 10.9.9.0/24
  EXPECT_EQ(status[0].notifications_sent, 0u);
  EXPECT_EQ(status[0].state, "Established");
  EXPECT_EQ(status[0].prefixes_advertised, 1u) << "the router has our one route";
}

TEST_F(BgpSessionTest, SessionResetClassesGetTheirNotification) {
  StartSpeaker();
  ASSERT_TRUE(peer_.Establish());
  ExpectInitialRib();
  // NLRI that cannot be parsed: 3/10.
  peer_.Send(RawUpdate(Cat({kOrigin, kAsPath, kNextHop}), {33, 1, 2, 3, 4, 5}));
  ExpectReset(error::kUpdate, error::kInvalidNetworkField);
  // MP_REACH_NLRI twice: 3/1.
  const auto mp = Attr(0x80, 14, Cat({{0, 2, 1, 16}, std::vector<uint8_t>(16, 0x20), {0}, {32, 0x20, 1, 0xd, 0xb8}}));
  peer_.Send(RawUpdate(Cat({kOrigin, kAsPath, mp, mp}), {}));
  ExpectReset(error::kUpdate, error::kMalformedAttributeList);
  // Unrecognized well-known attribute: 3/2.
  peer_.Send(RawUpdate(Cat({kOrigin, kAsPath, kNextHop, Attr(0x40, 99, {1})}), {24, 10, 9, 9}));
  ExpectReset(error::kUpdate, error::kUnrecognizedWellKnown);
  // A broken header: 1/1, and a bad length: 1/2.
  std::vector<uint8_t> bad_marker = EncodeKeepalive();
  bad_marker[0] = 0;
  peer_.Send(bad_marker);
  ExpectReset(error::kHeader, error::kConnectionNotSynchronized);
  std::vector<uint8_t> bad_length = EncodeKeepalive();
  bad_length[17] = 18;
  peer_.Send(bad_length);
  ExpectReset(error::kHeader, error::kBadMessageLength);
  // A second OPEN once established: FSM error.
  peer_.Send(EncodeOpen({.version = 4, .as_number = kPeerAs, .hold_time_s = 9, .bgp_id = 1, .capabilities = {}}));
  ExpectReset(error::kFsm, 3);
  EXPECT_GE(speaker_->Status()[0].established_count, 7u);
}

TEST_F(BgpSessionTest, BadOpensAreRefused) {
  StartSpeaker();
  auto refuse = [&](OpenMessage open, uint8_t code, uint8_t subcode) {
    ASSERT_TRUE(peer_.Accept());
    ASSERT_TRUE(peer_.Next());  // routerd's OPEN
    peer_.Send(EncodeOpen(open));
    auto message = peer_.Next();
    ASSERT_TRUE(message && std::holds_alternative<NotificationMessage>(*message));
    EXPECT_EQ(std::get<NotificationMessage>(*message).code, code);
    EXPECT_EQ(std::get<NotificationMessage>(*message).subcode, subcode);
    EXPECT_TRUE(peer_.Closed());
  };
  OpenMessage good{.version = 4, .as_number = kPeerAs, .hold_time_s = 9, .bgp_id = 0x7f000001, .capabilities = {}};
  OpenMessage wrong_as = good;
  wrong_as.as_number = 64999;
  refuse(wrong_as, error::kOpen, error::kBadPeerAs);
  OpenMessage short_hold = good;
  short_hold.hold_time_s = 2;
  refuse(short_hold, error::kOpen, error::kUnacceptableHoldTime);
  OpenMessage no_id = good;
  no_id.bgp_id = 0;
  refuse(no_id, error::kOpen, error::kBadBgpId);
  // UPDATE before the OPEN is answered: FSM error in OpenSent.
  ASSERT_TRUE(peer_.Accept());
  ASSERT_TRUE(peer_.Next());
  peer_.Send(RawUpdate(Cat({kOrigin, kAsPath, kNextHop}), {24, 10, 9, 9}));
  auto message = peer_.Next();
  ASSERT_TRUE(message && std::holds_alternative<NotificationMessage>(*message));
  EXPECT_EQ(std::get<NotificationMessage>(*message).code, error::kFsm);
  ASSERT_TRUE(peer_.Establish());
}

TEST_F(BgpSessionTest, MaxPrefixCeases) {
  StartSpeaker(/*max_prefixes=*/3);
  ASSERT_TRUE(peer_.Establish());
  ExpectInitialRib();
  peer_.Send(RawUpdate(Cat({kOrigin, kAsPath, kNextHop}), {24, 10, 9, 1, 24, 10, 9, 2, 24, 10, 9, 3, 24, 10, 9, 4}));
  auto message = peer_.Next();
  ASSERT_TRUE(message && std::holds_alternative<NotificationMessage>(*message));
  EXPECT_EQ(std::get<NotificationMessage>(*message).code, error::kCease);
  EXPECT_EQ(std::get<NotificationMessage>(*message).subcode, error::kMaxPrefixes);
  EXPECT_TRUE(peer_.Closed());
  // It stays away for a while rather than hammering the router.
  EXPECT_FALSE(peer_.Accept(1s));
}

TEST_F(BgpSessionTest, HoldTimerExpiresWhenThePeerGoesSilent) {
  StartSpeaker();
  ASSERT_TRUE(peer_.Establish(/*hold_time_s=*/3));
  ExpectInitialRib();
  // Say nothing: after 3 s routerd sends Hold Timer Expired and closes.
  std::optional<Message> message;
  do {
    message = peer_.Next(true, 6s);
  } while (message && !std::holds_alternative<NotificationMessage>(*message));
  ASSERT_TRUE(message);
  EXPECT_EQ(std::get<NotificationMessage>(*message).code, error::kHoldTimerExpired);
}

TEST_F(BgpSessionTest, GarbageNeverCrashes) {
  StartSpeaker();
  std::mt19937 random(7);
  for (int round = 0; round < 20; ++round) {
    ASSERT_TRUE(peer_.Establish());
    ExpectInitialRib();
    // A valid header with a random body, or random bytes.
    std::vector<uint8_t> junk(16, 0xff);
    const size_t length = 19 + random() % 200;
    junk.insert(junk.end(), {static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length),
                             static_cast<uint8_t>(1 + random() % 5)});
    while (junk.size() < length) junk.push_back(static_cast<uint8_t>(random()));
    if (round % 4 == 3) junk.assign(50, static_cast<uint8_t>(random()));
    peer_.Send(junk);
    peer_.CloseConnection();
  }
  ASSERT_TRUE(peer_.Establish());
}

}  // namespace
}  // namespace geodesic::routerd::bgp
