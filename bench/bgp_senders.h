#pragma once
// bench_bgp's receiving FRR and its reference senders: the pieces of the
// 100,000-prefix injection, change and withdrawal lines that are not
// routerd (see bench_bgp.cc for what each line measures). The senders are
// real daemons (Debian's gobgpd, bird2, frr) started in a scratch directory
// and stopped before their function returns. Any failure throws
// BenchFailure, so that main unwinds: every daemon stops, the namespace goes.
// Thread-compatible.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "sim/frr_router.h"
#include "sim/netns/netns_backbone.h"

namespace geodesic::bench {

using Clock = std::chrono::steady_clock;

inline constexpr uint32_t kFrrAs = 65000, kRouterdAs = 65001, kGobgpAs = 65002, kBirdAs = 65003,
                          kFrrSenderAs = 65004;
inline constexpr int kInjectPrefixes = 100'000;
inline constexpr char kFirstNextHop[] = "10.255.0.1", kChangedNextHop[] = "10.255.0.2";
inline constexpr char kBird[] = "/usr/sbin/bird";

// A benchmark that cannot go on; caught in main.
struct BenchFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void Die(const std::string& what);

template <typename T>
T Check(absl::StatusOr<T> value, const std::string& what) {
  if (!value.ok()) Die(what + ": " + value.status().ToString());
  return *std::move(value);
}

// The i-th /24 of the benchmarks: 10.0.0.0/24, 10.0.1.0/24, ...
std::string Prefix24(int i);
double MillisecondsSince(Clock::time_point start);

// Polls FRR's neighbor state (every millisecond) until `done` or 120 s; the
// milliseconds since `start`.
double WaitForFrr(const sim::FrrRouter& frr, const std::string& neighbor, Clock::time_point start,
                  const std::function<bool(const sim::FrrNeighborState&)>& done);

// Where the senders reach the receiving FRR: over a veth pair into a network
// namespace the bench makes (every sender in this namespace, the receiver
// alone in its own), or, where namespaces cannot be made, over loopback.
struct InjectionPath {
  std::string receiver_address;   // FRR listens here
  std::string sender_address;     // every sender's local address
  std::string network_namespace;  // the receiver's; empty: loopback
};

// What one sender took, each from its own start event to the receiver
// holding the result (negative: not measured).
struct SenderSpans {
  double inject_ms = -1;    // session Established -> all 100,000 accepted
  double change_ms = -1;    // the sender told to move every prefix -> all on the new next hop
  double withdraw_ms = -1;  // the sender told to withdraw every prefix -> none accepted
};

// The receiving FRR's port: chosen before it starts, so a sender can be told it first.
int ReceiverPort(const InjectionPath& path);
// A fresh receiving FRR in `dir` whose one neighbor is the sender; `port` 0: ReceiverPort.
std::unique_ptr<sim::FrrRouter> StartReceiver(const std::string& dir, const InjectionPath& path, uint32_t sender_as,
                                              int port = 0);

// The three spans, polled the same way for every sender.
double TimeFromEstablishedToFull(const sim::FrrRouter& frr, const std::string& neighbor);
double TimeUntilAllVia(const sim::FrrRouter& frr, const std::string& next_hop, Clock::time_point start);
double TimeUntilNone(const sim::FrrRouter& frr, const std::string& neighbor, Clock::time_point start);

// GoBGP: the routes injected from an MRT file before its neighbor is enabled. Inject only.
SenderSpans RunGobgp(const std::string& dir, const InjectionPath& path);
// BIRD 2: inject, change (`birdc configure`), withdraw (`birdc disable`).
SenderSpans RunBird(const std::string& dir, const InjectionPath& path);
// A second FRR bgpd with `network` statements: inject, change (its outbound
// route-map's next hop), withdraw (that route-map denying every prefix).
SenderSpans RunFrrSender(const std::string& dir, const InjectionPath& path);

// The receiver's namespace and veth; null, with `why`, when this process
// cannot make namespaces.
std::unique_ptr<sim::NetnsBackbone> MakeNetwork(std::string& why);

}  // namespace geodesic::bench
