// Active probing: the wire format, the estimator's verdicts on a simulated
// clock, and two probe engines probing each other on loopback through
// impairment relays.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>

#include "site_agent/agent_metrics.h"
#include "site_agent/probe/link_estimator.h"
#include "site_agent/probe/probe_engine.h"
#include "site_agent/probe/probe_packet.h"
#include "sim/wait_until.h"
#include "tests/site_agent/impairment_relay.h"

namespace geodesic::site_agent::probe {
namespace {

using boost::asio::ip::udp;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

// --- wire format ---

TEST(ProbePacketTest, RoundTrips) {
  const ProbePacket packet{.type = ProbeType::kReply, .session = 0x0102030405060708, .link_tag = 7, .seq = 42,
                           .t1_ns = 1000, .t2_ns = 2000, .t3_ns = 2500};
  const auto bytes = EncodeProbe(packet);
  absl::StatusOr<ProbePacket> decoded = DecodeProbe(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->type, ProbeType::kReply);
  EXPECT_EQ(decoded->session, packet.session);
  EXPECT_EQ(decoded->link_tag, 7u);
  EXPECT_EQ(decoded->seq, 42u);
  EXPECT_EQ(decoded->t1_ns, 1000u);
  EXPECT_EQ(decoded->t3_ns, 2500u);
}

TEST(ProbePacketTest, RefusesEveryMalformedClass) {
  const auto good = EncodeProbe({.session = 1, .seq = 1});
  auto with = [&](size_t offset, uint8_t value) {
    auto bytes = good;
    bytes[offset] = value;
    return bytes;
  };
  const std::vector<std::pair<std::vector<uint8_t>, std::string>> cases = {
      {{}, "0 bytes"},
      {std::vector<uint8_t>(good.begin(), good.end() - 1), "55 bytes"},
      {[&] { std::vector<uint8_t> v(good.begin(), good.end()); v.push_back(0); return v; }(), "57 bytes"},
      {[&] { auto b = with(0, 'X'); return std::vector<uint8_t>(b.begin(), b.end()); }(), "magic"},
      {[&] { auto b = with(4, 9); return std::vector<uint8_t>(b.begin(), b.end()); }(), "unknown probe type 9"},
      {[&] { auto b = with(5, 1); return std::vector<uint8_t>(b.begin(), b.end()); }(), "reserved"},
      {[&] { auto b = with(20, 1); return std::vector<uint8_t>(b.begin(), b.end()); }(), "reserved"},
      {[&] { auto b = EncodeProbe({.session = 0, .seq = 1}); return std::vector<uint8_t>(b.begin(), b.end()); }(),
       "start at 1"},
      {[&] { auto b = EncodeProbe({.session = 1, .seq = 0}); return std::vector<uint8_t>(b.begin(), b.end()); }(),
       "start at 1"},
      {[&] {
         auto b = EncodeProbe({.type = ProbeType::kReply, .session = 1, .seq = 1, .t2_ns = 10, .t3_ns = 5});
         return std::vector<uint8_t>(b.begin(), b.end());
       }(),
       "before it was received"},
  };
  for (const auto& [bytes, expected] : cases) {
    absl::StatusOr<ProbePacket> decoded = DecodeProbe(bytes);
    ASSERT_FALSE(decoded.ok()) << expected;
    EXPECT_THAT(decoded.status().message(), HasSubstr(expected));
  }
}

// --- the estimator, on a simulated clock ---

using TimePoint = LinkEstimator::TimePoint;

class EstimatorTest : public ::testing::Test {
 protected:
  EstimatorOptions options_{.interval = milliseconds(10), .detect_multiplier = 3, .window = 50,
                            .loss_degraded_ratio = 0.05, .hold_down = milliseconds(100),
                            .hold_down_max = milliseconds(1000)};
  LinkEstimator estimator_{options_};
  TimePoint now_ = TimePoint{} + std::chrono::hours(1);
  uint64_t seq_ = 0;

  // One interval: a probe sent, answered after `rtt` unless `lost`.
  bool Step(bool lost = false, milliseconds rtt = milliseconds(2)) {
    estimator_.Sent(++seq_, now_);
    if (!lost) {
      EXPECT_TRUE(estimator_.Answered(seq_, now_ + rtt, std::chrono::microseconds(100)));
    }
    now_ += options_.interval;
    return estimator_.Update(now_);
  }
};

TEST_F(EstimatorTest, UpWithRttJitterAndNoLoss) {
  EXPECT_EQ(estimator_.reported_state(), v1::OPER_STATE_UNKNOWN);
  EXPECT_TRUE(Step());
  for (int i = 0; i < 20; ++i) Step(false, milliseconds(2 + i % 2));
  const v1::LinkHealth health = estimator_.health();
  EXPECT_EQ(health.state(), v1::OPER_STATE_UP);
  EXPECT_NEAR(static_cast<double>(health.rtt_us()), 2900, 1000);  // minus 100 us in the responder
  EXPECT_NEAR(static_cast<double>(health.jitter_us()), 1000, 100);
  EXPECT_EQ(health.loss_ratio(), 0);
}

TEST_F(EstimatorTest, DownAfterMultiplierIntervalsWithoutAnAnswer) {
  for (int i = 0; i < 20; ++i) Step();
  const TimePoint cut = now_;
  while (estimator_.reported_state() != v1::OPER_STATE_DOWN) Step(/*lost=*/true);
  EXPECT_LE(now_ - cut, options_.interval * 3 + options_.interval);
}

// A prober its host did not run for a while sent nothing meanwhile: the
// silence is its own, and no link is down for it.
TEST_F(EstimatorTest, APauseOfTheProberItselfIsNoCut) {
  for (int i = 0; i < 20; ++i) Step();
  now_ += options_.interval * 30;  // nothing sent, nothing heard: starved of CPU
  EXPECT_FALSE(estimator_.Update(now_));
  EXPECT_EQ(estimator_.reported_state(), v1::OPER_STATE_UP);
  // Its first probe after the pause is answered, or lost, like any other.
  Step(/*lost=*/true);
  Step(/*lost=*/true);
  EXPECT_EQ(estimator_.reported_state(), v1::OPER_STATE_UP);
  Step(/*lost=*/true);
  EXPECT_EQ(estimator_.reported_state(), v1::OPER_STATE_DOWN) << "three probes out, none back: a cut";
}

TEST_F(EstimatorTest, TwentyPercentLossIsDegradedNotDown) {
  for (int i = 0; i < 20; ++i) Step();
  for (int i = 0; i < 200; ++i) {
    Step(/*lost=*/i % 5 == 4);
    EXPECT_NE(estimator_.reported_state(), v1::OPER_STATE_DOWN);
  }
  EXPECT_EQ(estimator_.reported_state(), v1::OPER_STATE_DEGRADED);
  EXPECT_NEAR(estimator_.health().loss_ratio(), 0.2, 0.05);
}

// A loss wandering around the threshold (4-6%) keeps a degraded link
// degraded; only a loss below half the threshold brings it back up.
TEST_F(EstimatorTest, ALossNearTheThresholdDoesNotFlap) {
  for (int i = 0; i < 20; ++i) Step();
  for (int i = 0; i < 200; ++i) Step(/*lost=*/i % 10 == 9);  // 10%
  ASSERT_EQ(estimator_.reported_state(), v1::OPER_STATE_DEGRADED);
  for (int i = 0; i < 500; ++i) {
    Step(/*lost=*/i % 25 == 24);  // 4%: under the threshold, over half of it
    EXPECT_EQ(estimator_.reported_state(), v1::OPER_STATE_DEGRADED) << "probe " << i;
  }
  for (int i = 0; i < 500 && estimator_.reported_state() != v1::OPER_STATE_UP; ++i) Step(/*lost=*/i % 100 == 99);
  EXPECT_EQ(estimator_.reported_state(), v1::OPER_STATE_UP) << "1% loss is healthy";
}

TEST_F(EstimatorTest, HighRttIsDegradedWhenConfigured) {
  options_.rtt_degraded_us = 5000;
  LinkEstimator estimator(options_);
  estimator.Sent(1, now_);
  estimator.Answered(1, now_ + milliseconds(8), std::chrono::nanoseconds(0));
  estimator.Update(now_ + milliseconds(10));
  EXPECT_EQ(estimator.reported_state(), v1::OPER_STATE_DEGRADED);
}

TEST_F(EstimatorTest, RecoveryWaitsOutAHoldDownThatGrowsWithFlaps) {
  for (int i = 0; i < 20; ++i) Step();
  std::vector<milliseconds> recovery;
  for (int flap = 0; flap < 3; ++flap) {
    while (estimator_.reported_state() != v1::OPER_STATE_DOWN) Step(true);
    const TimePoint healed = now_;
    // Out of "down" after the hold-down; degraded while the lost probes
    // are still in the window, then up.
    while (estimator_.reported_state() == v1::OPER_STATE_DOWN) Step();
    recovery.push_back(std::chrono::duration_cast<milliseconds>(now_ - healed));
    EXPECT_EQ(estimator_.reported_state(), v1::OPER_STATE_DEGRADED) << "flap " << flap;
    while (estimator_.reported_state() != v1::OPER_STATE_UP) Step();
  }
  // 100, 200, 400 ms (plus an interval or two of granularity).
  EXPECT_GE(recovery[0], milliseconds(100));
  EXPECT_LT(recovery[0], milliseconds(150));
  EXPECT_GE(recovery[1], milliseconds(200));
  EXPECT_GE(recovery[2], milliseconds(400));
  // Stable for hold_down_max forgives one flap.
  const auto before = estimator_.current_hold_down();
  for (int i = 0; i < 110; ++i) Step();
  EXPECT_EQ(estimator_.current_hold_down(), before / 2);
}

TEST_F(EstimatorTest, LateRepeatedAndUnknownAnswersAreRefused) {
  estimator_.Sent(1, now_);
  EXPECT_EQ(estimator_.Answered(1, now_ + milliseconds(1), {}), std::chrono::nanoseconds(milliseconds(1)));
  EXPECT_FALSE(estimator_.Answered(1, now_ + milliseconds(2), {}));  // twice
  EXPECT_FALSE(estimator_.Answered(99, now_ + milliseconds(2), {}));  // never sent
  estimator_.Sent(2, now_);
  estimator_.Update(now_ + milliseconds(40));  // judged lost
  EXPECT_FALSE(estimator_.Answered(2, now_ + milliseconds(41), {}));
}

// --- two engines on loopback through impairment relays ---

// `detect_multiplier` intervals (10 ms) without an answer read as down.
ProbeEngineOptions EngineOptions(const std::string& link_id, udp::endpoint peer, udp::endpoint accept_from,
                                 uint32_t detect_multiplier = 3) {
  ProbeEngineOptions options;
  options.listen = udp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0);
  options.estimator = {.interval = milliseconds(10), .detect_multiplier = detect_multiplier, .window = 50,
                       .loss_degraded_ratio = 0.05, .hold_down = milliseconds(100),
                       .hold_down_max = milliseconds(2000)};
  options.links = {{link_id, peer}};
  options.accept_from = {accept_from};
  return options;
}

// Records the reported state transitions of an engine's one link.
class Transitions {
 public:
  void Record(v1::OperState state) {
    std::lock_guard lock(mu_);
    if (!states_.empty() && states_.back().first == state) return;
    states_.emplace_back(state, std::chrono::steady_clock::now());
  }
  std::optional<std::chrono::steady_clock::time_point> When(v1::OperState state, size_t after = 0) {
    std::lock_guard lock(mu_);
    for (size_t i = after; i < states_.size(); ++i) {
      if (states_[i].first == state) return states_[i].second;
    }
    return std::nullopt;
  }
  size_t size() {
    std::lock_guard lock(mu_);
    return states_.size();
  }
  bool Contains(v1::OperState state, size_t after) { return When(state, after).has_value(); }

 private:
  std::mutex mu_;
  std::vector<std::pair<v1::OperState, std::chrono::steady_clock::time_point>> states_;
};

// The shared bounded poll (sim::WaitUntil), every 2 ms: the transitions
// carry their own times, so the poll does not blur the detection measured.
bool WaitFor(const std::function<bool()>& condition, milliseconds timeout) {
  return sim::WaitUntil("a probe engine's state", timeout, condition, milliseconds(2)).ok();
}

// Two engines probing each other's link, a -> b through a_to_b and b -> a
// through b_to_a; a's reported state transitions are recorded.
class EnginePair {
 public:
  // `a_on_rtt`: a's ProbeEngineOptions::on_rtt.
  ::testing::AssertionResult Start(uint32_t detect_multiplier,
                                   std::function<void(size_t, std::chrono::nanoseconds)> a_on_rtt = nullptr) {
    ProbeEngineOptions a_options =
        EngineOptions("a-b", a_to_b.listen_endpoint(), b_to_a.outward_endpoint(), detect_multiplier);
    a_options.on_rtt = std::move(a_on_rtt);
    auto started_a = ProbeEngine::Start(
        std::move(a_options),
        [this] {
          if (ProbeEngine* engine = a_started.load()) a_states.Record(engine->Current()[0].second.state());
        });
    if (!started_a.ok()) return ::testing::AssertionFailure() << started_a.status();
    auto started_b = ProbeEngine::Start(
        EngineOptions("b-a", b_to_a.listen_endpoint(), a_to_b.outward_endpoint(), detect_multiplier), nullptr);
    if (!started_b.ok()) return ::testing::AssertionFailure() << started_b.status();
    a = *std::move(started_a);
    a_started = a.get();
    b = *std::move(started_b);
    a_to_b.SetTarget(b->local_endpoint());
    b_to_a.SetTarget(a->local_endpoint());
    if (!WaitFor([&] { return StateOf(*a) == v1::OPER_STATE_UP && StateOf(*b) == v1::OPER_STATE_UP; },
                 milliseconds(3000))) {
      return ::testing::AssertionFailure() << "the engines never saw each other up";
    }
    return ::testing::AssertionSuccess();
  }
  static v1::OperState StateOf(const ProbeEngine& engine) { return engine.Current()[0].second.state(); }

  testing::ImpairmentRelay a_to_b, b_to_a;
  Transitions a_states;
  std::atomic<ProbeEngine*> a_started{nullptr};  // what a's callback reads: set once a is started
  std::unique_ptr<ProbeEngine> a, b;
};

TEST(ProbeEngineTest, TwoAgentsSeeABlackholeAndRecovery) {
  EnginePair pair;
  ASSERT_TRUE(pair.Start(/*detect_multiplier=*/3));
  ProbeEngine& a = *pair.a;
  EXPECT_GT(a.Current()[0].second.rtt_us(), 0u);
  EXPECT_LT(a.Current()[0].second.rtt_us(), 50'000u);

  // A blackhole reads down. How fast (interval x multiplier, 30 ms) is the
  // estimator's to test on a fake clock (EstimatorTest) and a benchmark's to
  // measure: on a loaded machine's real clock a starved thread would fail a bound.
  size_t mark = pair.a_states.size();
  const auto cut = std::chrono::steady_clock::now();
  pair.a_to_b.Blackhole();
  ASSERT_TRUE(WaitFor([&] { return pair.a_states.Contains(v1::OPER_STATE_DOWN, mark); }, milliseconds(2000)));
  const auto detection =
      std::chrono::duration_cast<milliseconds>(*pair.a_states.When(v1::OPER_STATE_DOWN, mark) - cut);
  std::printf("blackhole detected in %lld ms (interval 10 ms x 3)\n", static_cast<long long>(detection.count()));
  EXPECT_EQ(EnginePair::StateOf(*pair.b), v1::OPER_STATE_UP);  // the other direction is fine

  // Recovery: up again once the hold-down passed.
  mark = pair.a_states.size();
  pair.a_to_b.Pass();
  ASSERT_TRUE(WaitFor([&] { return pair.a_states.Contains(v1::OPER_STATE_UP, mark); }, milliseconds(3000)));
  EXPECT_EQ(a.counters().rejected_unknown_peer, 0u);
  EXPECT_EQ(pair.b->counters().rejected_replay, 0u);
}

// The agent's probe RTT histogram gets every accepted reply, and only those.
TEST(ProbeEngineTest, EveryAcceptedReplyIsObservedWithItsRtt) {
  metrics::Registry registry("site_agent", {});
  AgentMetrics metrics(registry);
  prometheus::Histogram& histogram = metrics.ProbeRtt("a-b");
  std::atomic<int> wrong_link{0};
  EnginePair pair;
  ASSERT_TRUE(pair.Start(/*detect_multiplier=*/3, [&](size_t link_index, std::chrono::nanoseconds rtt) {
    if (link_index != 0) ++wrong_link;
    histogram.Observe(std::chrono::duration<double>(rtt).count());
  }));
  // Replies stop once a's requests are blackholed and a sees the link down.
  const size_t mark = pair.a_states.size();
  pair.a_to_b.Blackhole();
  ASSERT_TRUE(WaitFor([&] { return pair.a_states.Contains(v1::OPER_STATE_DOWN, mark); }, milliseconds(2000)));
  const prometheus::ClientMetric observed = histogram.Collect();
  const uint64_t accepted = pair.a->counters().replies_accepted;
  EXPECT_GT(accepted, 0u);
  EXPECT_EQ(observed.histogram.sample_count, accepted);
  EXPECT_EQ(wrong_link.load(), 0);
  const double mean_rtt_s = observed.histogram.sample_sum / static_cast<double>(observed.histogram.sample_count);
  EXPECT_GT(mean_rtt_s, 0.0);
  EXPECT_LT(mean_rtt_s, 0.05) << "loopback through a relay";
}

// How loss is classified is the estimator's, shown at its edge (3 intervals,
// 20% loss) on a simulated clock in EstimatorTest. Here a real lossy path
// must read the same: degraded at its loss ratio, never down, for a whole
// loss window. These engines take 10 silent intervals (100 ms) for down, not
// 3: at 3, a 20% loss leaves 10 ms of slack, and any 10 ms pause of one of
// the four threads involved on a busy 2-core machine reads as a dead link,
// which is the scheduler under test, not the loss.
TEST(ProbeEngineTest, GrayLossIsDegradedNeverDown) {
  EnginePair pair;
  ASSERT_TRUE(pair.Start(/*detect_multiplier=*/10));
  // 20% loss (every fifth probe, never two in a row).
  size_t mark = pair.a_states.size();
  pair.a_to_b.DropOneIn(5);
  ASSERT_TRUE(WaitFor([&] { return pair.a_states.Contains(v1::OPER_STATE_DEGRADED, mark); }, milliseconds(3000)));
  // Never down: a whole loss window (50 probes) more goes through the lossy
  // path, and the prober judged every one of them without a down.
  const uint64_t sent_at_degraded = pair.a_to_b.forwarded() + pair.a_to_b.dropped();
  ASSERT_TRUE(WaitFor([&] { return pair.a_to_b.forwarded() + pair.a_to_b.dropped() >= sent_at_degraded + 50; },
                      milliseconds(5000)));
  EXPECT_FALSE(pair.a_states.Contains(v1::OPER_STATE_DOWN, mark));
  EXPECT_EQ(EnginePair::StateOf(*pair.a), v1::OPER_STATE_DEGRADED);
  EXPECT_NEAR(pair.a->Current()[0].second.loss_ratio(), 0.2, 0.08);

  // And back up once the window is clean again.
  mark = pair.a_states.size();
  pair.a_to_b.Pass();
  ASSERT_TRUE(WaitFor([&] { return pair.a_states.Contains(v1::OPER_STATE_UP, mark); }, milliseconds(5000)));
}

// A raw UDP socket on loopback, to play a peer or a stranger.
class RawPeer {
 public:
  RawPeer() : socket_(io_, udp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)) {
    socket_.non_blocking(true);
  }
  udp::endpoint endpoint() const { return socket_.local_endpoint(); }
  void Send(std::span<const uint8_t> bytes, const udp::endpoint& to) { socket_.send_to(boost::asio::buffer(bytes.data(), bytes.size()), to); }
  // The next datagram within `timeout`, if any.
  std::optional<std::vector<uint8_t>> Receive(milliseconds timeout = milliseconds(200)) {
    std::array<uint8_t, 2048> buffer;
    std::optional<std::vector<uint8_t>> received;
    (void)sim::WaitUntil("a datagram", timeout, [&] {
      boost::system::error_code error;
      udp::endpoint from;
      const size_t bytes = socket_.receive_from(boost::asio::buffer(buffer), from, 0, error);
      if (!error) received.emplace(buffer.begin(), buffer.begin() + bytes);
      return received.has_value();
    }, milliseconds(1));
    return received;
  }

 private:
  boost::asio::io_context io_;
  udp::socket socket_;
};

TEST(ProbeEngineTest, TheResponderAnswersOnlyPeersAndNeverTwice) {
  RawPeer peer, stranger;
  ProbeEngineOptions options = EngineOptions("x-y", udp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 9), peer.endpoint());
  options.links.clear();  // a pure responder
  auto engine = ProbeEngine::Start(options, nullptr);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const udp::endpoint target = (*engine)->local_endpoint();
  const auto request = EncodeProbe({.session = 77, .seq = 5, .t1_ns = 1});

  // Each refusal is awaited as the engine counts it; then nothing came back.
  stranger.Send(request, target);
  ASSERT_TRUE(WaitFor([&] { return (*engine)->counters().rejected_unknown_peer == 1; }, milliseconds(2000)));
  EXPECT_FALSE(stranger.Receive(milliseconds(0)).has_value());
  peer.Send(std::vector<uint8_t>{'G', 'D', 'P', '1', 1}, target);
  ASSERT_TRUE(WaitFor([&] { return (*engine)->counters().rejected_malformed == 1; }, milliseconds(2000)));
  EXPECT_FALSE(peer.Receive(milliseconds(0)).has_value());
  peer.Send(request, target);
  auto reply = peer.Receive();
  ASSERT_TRUE(reply.has_value());
  absl::StatusOr<ProbePacket> decoded = DecodeProbe(*reply);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->type, ProbeType::kReply);
  EXPECT_EQ(decoded->session, 77u);
  EXPECT_EQ(decoded->seq, 5u);
  EXPECT_GE(decoded->t3_ns, decoded->t2_ns);
  peer.Send(request, target);  // replayed
  ASSERT_TRUE(WaitFor([&] { return (*engine)->counters().rejected_replay == 1; }, milliseconds(2000)));
  EXPECT_FALSE(peer.Receive(milliseconds(0)).has_value());

  const ProbeCounters counters = (*engine)->counters();
  EXPECT_EQ(counters.rejected_unknown_peer, 1u);
  EXPECT_EQ(counters.rejected_malformed, 1u);
  EXPECT_EQ(counters.rejected_replay, 1u);
  EXPECT_EQ(counters.requests_answered, 1u);
}

TEST(ProbeEngineTest, TheProberAcceptsOnlyAnswersToItsOwnWaitingProbes) {
  RawPeer peer;
  auto engine = ProbeEngine::Start(EngineOptions("x-y", peer.endpoint(), peer.endpoint()), nullptr);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const udp::endpoint prober = (*engine)->local_endpoint();
  std::optional<ProbePacket> request;
  while (!request) {
    auto bytes = peer.Receive(milliseconds(1000));
    ASSERT_TRUE(bytes.has_value());
    auto decoded = DecodeProbe(*bytes);
    ASSERT_TRUE(decoded.ok());
    if (decoded->type == ProbeType::kRequest) request = *decoded;
  }
  ProbePacket reply = *request;
  reply.type = ProbeType::kReply;
  reply.t2_ns = 10;
  reply.t3_ns = 20;
  ProbePacket wrong_session = reply;
  wrong_session.session ^= 1;
  ProbePacket unknown_seq = reply;
  unknown_seq.seq += 1'000'000;
  peer.Send(EncodeProbe(wrong_session), prober);
  peer.Send(EncodeProbe(unknown_seq), prober);
  peer.Send(EncodeProbe(reply), prober);
  peer.Send(EncodeProbe(reply), prober);  // twice
  ASSERT_TRUE(WaitFor([&] { return (*engine)->counters().rejected_unexpected_reply >= 3; }, milliseconds(2000)));
  EXPECT_EQ((*engine)->counters().rejected_unexpected_reply, 3u);
  EXPECT_EQ((*engine)->counters().replies_accepted, 1u);
}

TEST(ProbeEngineTest, RefusesOptionsThatCannotWork) {
  ProbeEngineOptions options;
  options.listen = udp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0);
  options.estimator.interval = milliseconds(0);
  EXPECT_EQ(ProbeEngine::Start(options, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  options.estimator.interval = milliseconds(10);
  options.links = {{"x-y", udp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)}};
  EXPECT_EQ(ProbeEngine::Start(options, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseUdpEndpoint("127.0.0.1").ok());
  EXPECT_FALSE(ParseUdpEndpoint("host:80").ok());
  EXPECT_FALSE(ParseUdpEndpoint("127.0.0.1:65536").ok());
  EXPECT_TRUE(ParseUdpEndpoint("[::1]:7301").ok());
}

}  // namespace
}  // namespace geodesic::site_agent::probe
