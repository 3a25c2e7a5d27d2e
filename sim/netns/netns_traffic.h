#pragma once
// Real traffic across a NetnsBackbone (issue 21): paced UDP streams with
// sequence numbers between facilities' host addresses, sent and counted by
// geodesic-traffic, at the rates of the topology's elephant-flow workloads
// scaled like the links' capacities; and what each stream lost, when and for
// how long, so a test can set an outage beside the failure that caused it.
//
// NetnsTraffic runs one `geodesic-traffic receive` per destination facility
// and address family (all on one port of the facility's host address; the
// receiver tells streams apart by the stream id in every packet) and one
// `geodesic-traffic send` per stream in its source facility's namespace,
// bound to that facility's host address. They run until Stop(), or until the
// NetnsTraffic goes (killed then, without results).
//
// Thread-compatible. The backbone must outlive the NetnsTraffic.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/netns/netns_backbone.h"
#include "sim/process.h"
#include "topology/inventory.h"

namespace geodesic::sim {

// One paced UDP stream from `from_facility`'s host address to
// `to_facility`'s, of the family `v6` says.
struct TrafficStream {
  uint32_t id = 0;               // unique among the streams of one run
  std::string workload_id = {};  // the elephant workload it stands for; may be empty
  std::string from_facility = {};
  std::string to_facility = {};
  bool v6 = false;
  double rate_mbps = 0;     // UDP payload rate
  uint32_t size_bytes = 0;  // UDP payload per packet, 32..9000
  // Sent as this many flows (1..kMaxStreamFlows) of rate_mbps / flows, each
  // from a source port of its own, so the kernel's multipath hash spreads
  // the stream by the routes' weights as it spreads many connections; on
  // the wire flow f is stream id x kMaxStreamFlows + f (geodesic-traffic
  // send --flows).
  uint32_t flows = 1;
};
inline constexpr uint32_t kMaxStreamFlows = 64;
// The largest TrafficStream::id, so that every flow's wire id fits 32 bits.
inline constexpr uint32_t kMaxStreamId = UINT32_MAX / kMaxStreamFlows - 1;

// The packet-size rule of ElephantStreams: the payload that makes
// `packets_per_second` at `rate_mbps` (by default 1000: rate_mbps x 125
// bytes, rounded down), clamped to [kMinStreamPacketBytes,
// kMaxStreamPacketBytes]. So at 1000 a stream of 0.512..11.2 Mbit/s sends one
// packet per ms, a faster one more often (1400-byte packets: at 100 Mbit/s
// one every 0.112 ms), and only a stream slower than 0.512 Mbit/s less often
// (64-byte packets: at 0.1 Mbit/s one every 5.12 ms). The packet interval is
// the resolution of every loss and outage measurement: an outage is known to
// within one interval (of a flow, for a stream of several).
inline constexpr uint32_t kMinStreamPacketBytes = 64;
inline constexpr uint32_t kMaxStreamPacketBytes = 1400;  // one frame on a 1500-byte MTU, IPv6 included
[[nodiscard]] uint32_t StreamPacketBytes(double rate_mbps, double packets_per_second = 1000);

struct ElephantStreamOptions {
  uint32_t flows = 1;                        // per stream, 1..kMaxStreamFlows
  double packets_per_second_per_flow = 1000;  // the packet size follows (StreamPacketBytes)
};

// One stream per elephant-flow workload of `topology`, in workload order,
// ids 1, 2, ...: from the workload's source facility to the facility that
// announces its dst_prefix, of dst_prefix's family, at demand_gbps x
// `mbit_per_gbps` (the backbone's NetnsOptions::mbit_per_gbps), with the size
// StreamPacketBytes gives. Workloads of other kinds are skipped; none at all
// is an empty list. Each is options.flows flows, sized for
// options.packets_per_second_per_flow. InvalidArgument naming the workload
// for an unknown source facility, a dst_prefix no facility announces, a
// facility without a prefix of the family (so without a host address of it),
// a demand <= 0; and for mbit_per_gbps <= 0, flows outside 1..kMaxStreamFlows
// or packets_per_second_per_flow <= 0.
[[nodiscard]] absl::StatusOr<std::vector<TrafficStream>> ElephantStreams(const topology::Topology& topology,
                                                                         double mbit_per_gbps,
                                                                         ElephantStreamOptions options = {});

struct NetnsTrafficOptions {
  std::string binary_dir = {};  // holds geodesic-traffic
  std::string work_dir = {};    // made if missing; the reports and logs go here
  uint16_t port = 9000;    // every receiver's (each namespace has its own ports)
  double outage_min_ms = 1;   // gaps of at least this (packets x interval) are listed as outages
  double late_ms = 50;        // one-way delay over which a packet counts as late
  std::chrono::milliseconds start_timeout{10'000};  // for the receivers to listen
  std::chrono::milliseconds stop_timeout{10'000};   // for each process to report and exit
};

// One received packet, times CLOCK_REALTIME ns (the sender's clock for send,
// the receiver's for receive: the same host).
struct TrafficDelivery {
  uint64_t sequence = 0;
  int64_t send_ns = 0;
  int64_t receive_ns = 0;
};

// A run of consecutive packets of one flow lost between two that arrived.
struct TrafficOutage {
  uint32_t flow = 0;           // of the stream, 0..flows-1
  uint64_t first_missing = 0;  // sequence numbers
  uint64_t last_missing = 0;
  uint64_t packets = 0;
  double ms = 0;                 // packets x the stream's interval: how long sending into the void lasted
  TrafficDelivery last_before = {};   // the last packet that arrived before it
  TrafficDelivery first_after = {};   // the first that arrived after it
};

// One stream, its flows together: counts summed, outages of every flow in
// the order their losses began.
struct StreamResult {
  TrafficStream stream = {};
  uint64_t sent = 0;        // sequence numbers the sender used (sends the kernel refused included)
  uint64_t send_errors = 0; // of them, sends the kernel refused (no route, a down link at the source)
  uint64_t received = 0;    // distinct sequence numbers that arrived
  uint64_t lost = 0;        // sent - received: gaps, and packets before the first or after the last arrival
  uint64_t lost_at_end = 0; // of them, sent after the last that arrived (no outage lists them: no later arrival)
  uint64_t reordered = 0;
  uint64_t duplicates = 0;
  uint64_t late = 0;        // arrived later than NetnsTrafficOptions::late_ms after being sent
  uint64_t received_bytes = 0;  // payload
  double rate_mbps = 0;         // payload received over the time from the first to the last arrival
  int64_t interval_ns = 0;      // a flow's packet interval: the resolution of the outages
  double longest_gap_ms = 0;
  std::vector<TrafficOutage> outages = {};  // gaps of at least outage_min_ms
  uint64_t outages_omitted = 0;        // beyond the receiver's listing limit
};

struct TrafficResults {
  std::vector<StreamResult> streams = {};  // in the order given to Start
  double delivered_ratio = 0;         // received / sent over every stream; 0 when nothing was sent
  // Datagrams the receivers' own sockets dropped (full: the receiver did not
  // run in time): counted as lost above, but the host's, not the network's.
  uint64_t receiver_socket_drops = 0;

  // nullptr for an unknown stream id.
  const StreamResult* Stream(uint32_t stream_id) const;
  // The outage of the stream during which `unix_ns` (CLOCK_REALTIME ns, e.g.
  // when a link was cut) fell: last_before.send_ns <= unix_ns <
  // first_after.send_ns. None when the stream was delivering at that time
  // (to within its interval and outage_min_ms), or is unknown.
  std::optional<TrafficOutage> OutageSpanning(uint32_t stream_id, int64_t unix_ns) const;
  // The first packet sent after `unix_ns` that arrived, when an outage spans
  // `unix_ns` (its first_after: first_after.receive_ns - unix_ns is how long
  // the stream took to recover). None otherwise, as for OutageSpanning.
  std::optional<TrafficDelivery> FirstDeliveryAfter(uint32_t stream_id, int64_t unix_ns) const;
};

class NetnsTraffic {
 public:
  // Starts the receivers, waits until each listens, then starts the senders.
  // InvalidArgument for no streams, a repeated id, a facility not in the
  // backbone or without a host address of the stream's family, a rate <= 0 or
  // a size outside 32..9000; FailedPrecondition when binary_dir has no
  // geodesic-traffic; DeadlineExceeded (with the receiver's log) when a
  // receiver does not listen within start_timeout. Nothing is left running
  // on error.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<NetnsTraffic>> Start(const NetnsBackbone& backbone,
                                                                          NetnsTrafficOptions options,
                                                                          std::vector<TrafficStream> streams);

  // Waits until every flow of every stream has delivered a packet (asking
  // the receivers for their reports so far, SIGUSR1): traffic is flowing
  // everywhere. DeadlineExceeded naming the flows still silent.
  [[nodiscard]] absl::Status WaitDelivering(std::chrono::milliseconds timeout);

  // Kills whatever still runs (results are lost: call Stop() for them).
  ~NetnsTraffic();
  NetnsTraffic(const NetnsTraffic&) = delete;
  NetnsTraffic& operator=(const NetnsTraffic&) = delete;

  // Ends the senders (SIGTERM: each writes its summary), waits until the
  // links' queues are empty (what is still in flight lands; at most
  // stop_timeout, after which it counts as lost), ends the receivers (each
  // reads what is queued and writes its report) and reads them all.
  // Internal naming the process and its log when one fails or writes no
  // report; FailedPrecondition when called twice.
  [[nodiscard]] absl::StatusOr<TrafficResults> Stop();

  const std::vector<TrafficStream>& streams() const { return streams_; }

 private:
  struct Receiver {
    std::string facility = {};
    bool v6 = false;
    std::string report_path = {};
    ChildProcessPtr process = {};
  };
  struct Sender {
    uint32_t stream_id = 0;
    std::string summary_path = {};
    ChildProcessPtr process = {};
  };

  NetnsTraffic(const NetnsBackbone& backbone, NetnsTrafficOptions options, std::vector<TrafficStream> streams)
      : backbone_(backbone), options_(std::move(options)), streams_(std::move(streams)) {}

  absl::Status StartReceivers();
  absl::Status StartSenders();
  void WaitForQueuesToDrain() const;

  const NetnsBackbone& backbone_;
  NetnsTrafficOptions options_;
  std::vector<TrafficStream> streams_;
  std::vector<Receiver> receivers_;
  std::vector<Sender> senders_;
  bool stopped_ = false;
};
using NetnsTrafficPtr = std::unique_ptr<NetnsTraffic>;

}  // namespace geodesic::sim
