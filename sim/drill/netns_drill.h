#pragma once
// A netns drill (`tectl drill run FILE --netns`): the drill file's timeline on
// the netns lab (sim/netns/netns_lab.h), where real packets cross the plan.
// Every facility is a network namespace with FRR zebra + bgpd and routerd,
// its links veths shaped to capacity x mbit_per_gbps, its site agent probing
// them from inside; pathcomp runs on the host. The same expectations as the
// simulator and --live are judged, plus the packet ones (max_packet_loss_ms,
// min_delivered_ratio).
//
// The events, for real:
//  - fail link/srlg/node/partition: both ends of each veth administratively
//    down (`ip link set down`); the agents see it by their probes. fail
//    facility: every link of it down and its routerd, agent and router
//    (zebra, bgpd) stopped; restore starts them again;
//  - degrade: nftables drops `loss` of the link's packets at random both
//    ways, so the probes measure the loss; the kernel here has no netem, so
//    added latency reaches the model through the agent's health file (rtt_us);
//  - drain, plane and leader loss as --live (an intent, the fabric health
//    file, SIGKILL of pathcomp);
//  - restore: the reverse.
// Traffic: every elephant-flow workload is a stream of UDP packets between
// its facilities' host addresses at its demand x mbit_per_gbps, split into
// flows_per_elephant flows (source ports) so the kernel's multipath hash
// spreads it by the plan's weights. Per event (EventPackets): the streams
// that lost packets from the event until the next, their longest loss (ms,
// to the resolution of a flow's packet interval), when the last was carried
// again, the first and last kernel route change at the facilities of the
// event's links (ip monitor route), and once settled each link's measured
// rate (interface counters) against the plan's load. Overall (DrillPackets):
// sent, received, delivered ratio, the worst loss.
//
// The agents probe every reaction.probe_interval_ms of the drill file and
// declare a link down after reaction.detect_multiplier probes unanswered.
//
// Needs root, iproute2, nftables and FRR; FailedPrecondition saying which
// is missing otherwise. Everything it starts is stopped, and its namespaces
// removed, before it returns (after before_teardown).
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "geodesic/v1/drill.pb.h"
#include "sim/drill/drill_spec.h"
#include "sim/netns/netns_lab.h"

namespace geodesic::sim {

struct NetnsDrillOptions {
  std::string source_dir;  // the checkout (PKI script)
  std::string binary_dir;  // the build tree (the daemons, geodesic-traffic)
  std::string work_dir;    // created; configs, logs, traffic reports
  // Capacities and traffic on the veths: 1 Gbps of the model = this many
  // Mbit/s. The default keeps a backbone's worth of traffic within what two
  // cores forward.
  double mbit_per_gbps = 0.1;
  bool local_repair = true;    // false: routerd waits for the new plan (re-plan only)
  // An elephant is many connections: the kernel hashes whole flows onto
  // next hops, so a plan's split is followed to 1/flows of the elephant.
  uint32_t flows_per_elephant = 16;
  double packets_per_second_per_flow = 125;    // the loss measurement's resolution: 8 ms
  // All streams together stay within this; a backbone with more elephants
  // gets fewer packets per flow (at least 25/s), then fewer flows (at least
  // 2): a coarser resolution (DrillPackets::resolution_ms) rather than a
  // machine too busy to forward.
  double max_packets_per_second = 30'000;
  int measure_ms = 1000;                        // per settled event: the link rates' interval
  int settle_timeout_ms = 60'000;               // per event
  // Called with the running lab after the drill, before it is torn down
  // (tectl --keep waits there for the operator).
  std::function<void(NetnsLab&)> before_teardown = {};
};

[[nodiscard]] absl::StatusOr<v1::DrillReport> RunNetnsDrill(const DrillSpec& spec, const NetnsDrillOptions& options);

}  // namespace geodesic::sim
