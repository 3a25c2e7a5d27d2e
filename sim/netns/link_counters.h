#pragma once
// What a NetnsBackbone link has carried, read from the kernel: per end, the
// veth's byte and packet counters (`ip -j -s link show`) and its egress
// qdiscs' drops, overlimits and backlog (`tc -j -s qdisc show`); and the
// conversion of two readings into the model's units, to set measured
// per-link utilization beside the loads a plan expects.
//
// Counters are the kernel's, cumulative since the veth was made: compare two
// readings. Thread-safe (each call only runs commands in the namespaces).
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "sim/netns/netns_backbone.h"

namespace geodesic::sim {

struct LinkEndCounters {
  std::string facility = {};
  std::string interface = {};
  uint64_t tx_bytes = 0;          // frames sent towards the other end, Ethernet headers included
  uint64_t tx_packets = 0;
  uint64_t rx_bytes = 0;          // frames received from the other end
  uint64_t rx_packets = 0;
  uint64_t qdisc_drops = 0;       // packets the egress qdiscs (tbf, netem) dropped: a full queue
  uint64_t qdisc_overlimits = 0;  // times tbf had to hold a packet back (the link ran at its rate)
  uint64_t qdisc_backlog_packets = 0;  // packets queued right now
};

struct LinkCounters {
  std::string link_id = {};  // as asked for
  LinkEndCounters a = {};    // NetnsLink::a's end
  LinkEndCounters b = {};
};

// Both ends of `link_id` (either direction's id). NotFound for an unknown
// link; Internal naming the command when `ip` or `tc` fails or prints
// something that is not the JSON expected.
[[nodiscard]] absl::StatusOr<LinkCounters> ReadLinkCounters(const NetnsBackbone& backbone, const std::string& link_id);

// The rate of `bytes` over `seconds`, in Mbit/s on the veth and in the
// model's Gbps (Mbit/s / mbit_per_gbps, the backbone's shaping scale), and as
// a fraction of `capacity_gbps` (0 when the capacity is 0). Counter bytes
// include Ethernet, IP and UDP headers, as tbf counts them.
struct LinkRate {
  double mbit_per_s = 0;
  double model_gbps = 0;
  double utilization = 0;
};
// InvalidArgument for seconds <= 0, mbit_per_gbps <= 0 or a negative capacity.
[[nodiscard]] absl::StatusOr<LinkRate> RateOverInterval(uint64_t bytes, double seconds, double mbit_per_gbps,
                                                        double capacity_gbps);

}  // namespace geodesic::sim
