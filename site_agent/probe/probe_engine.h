#pragma once
// The agent's active probing: one UDP socket that both probes every link
// with a peer (a request per link per interval, see probe_packet.h) and
// answers the peers' probes, on one Boost.Asio thread, which drives hundreds
// of links at a 10 ms interval without effort.
//
// The responder answers only the configured peers (by address and port) and
// ignores everything else; requests replayed within a session are not
// answered twice; replies are accepted only from the link's peer, for this
// prober's session and a probe still waiting. Every refusal is counted.
// Probes go out as network control (DSCP CS6, socket priority 6) so that a
// link's scheduler can keep them ahead of the data that saturates it.
// Datagrams carry the kernel's arrival time (SO_TIMESTAMPNS), and a tick
// reads what waits on the socket before it judges anything lost: a prober
// that ran late still credits answers that came in time, and its peers'
// waits in a busy responder are left out of the RTT.
// Thread-safe: Current() and counters() may be called from any thread.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/ip/udp.hpp>

#include "absl/status/statusor.h"
#include "geodesic/v1/model.pb.h"
#include "site_agent/probe/link_estimator.h"

namespace geodesic::site_agent::probe {

struct ProbedLink {
  std::string id;
  boost::asio::ip::udp::endpoint peer;  // the far end's probe socket
};

struct ProbeEngineOptions {
  boost::asio::ip::udp::endpoint listen;  // port 0: any free port
  EstimatorOptions estimator;
  std::vector<ProbedLink> links;
  // Whose requests are answered; empty: the links' peers (an agent probes
  // from the socket it answers on, so its peers' requests come from there).
  std::vector<boost::asio::ip::udp::endpoint> accept_from;
  // Called on the probe thread with every accepted reply's round trip
  // (`link_index` into `links`); must not block. Optional.
  std::function<void(size_t link_index, std::chrono::nanoseconds rtt)> on_rtt;
  // 1-99: the probe thread runs SCHED_FIFO at this priority (best effort); 0: normal.
  int realtime_priority = 0;
};

struct ProbeCounters {
  uint64_t requests_sent = 0;
  uint64_t requests_answered = 0;
  uint64_t replies_accepted = 0;
  uint64_t rejected_unknown_peer = 0;
  uint64_t rejected_malformed = 0;
  uint64_t rejected_replay = 0;
  uint64_t rejected_unexpected_reply = 0;  // wrong session, unknown, late or repeated seq
};

class ProbeEngine {
 public:
  // Called on the probe thread when some link's reported state changed.
  using StateChanged = std::function<void()>;

  // Binds the socket and starts probing. InvalidArgument for options that
  // cannot work (no interval, a link without a peer), Unavailable when the
  // address cannot be bound.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ProbeEngine>> Start(ProbeEngineOptions options,
                                                                          StateChanged on_change);
  virtual ~ProbeEngine() = default;

  virtual boost::asio::ip::udp::endpoint local_endpoint() const = 0;
  // Every probed link's health (state, RTT, jitter, loss), in link order.
  virtual std::vector<std::pair<std::string, v1::LinkHealth>> Current() const = 0;
  virtual ProbeCounters counters() const = 0;
};

// "host:port" or "[v6]:port" with a literal address -> endpoint.
[[nodiscard]] absl::StatusOr<boost::asio::ip::udp::endpoint> ParseUdpEndpoint(const std::string& text);

}  // namespace geodesic::site_agent::probe
