#include "sim/drill/netns_drill.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/impact.h"
#include "sim/drill/live_drill.h"
#include "sim/lab_client.h"
#include "sim/netns/link_counters.h"
#include "sim/netns/netns_route_monitor.h"
#include "sim/netns/netns_traffic.h"
#include "sim/wait_until.h"

namespace geodesic::sim {
namespace {

using Clock = std::chrono::system_clock;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

// A link's counters carry Ethernet, IPv4 and UDP headers; the streams' rates
// (and so the plan's loads, scaled) are UDP payload.
constexpr uint64_t kHeaderBytes = 14 + 20 + 8;
// The agents' probes and the routers' keepalives alone: below this (model
// Gbps) a link the plan leaves empty is not listed. 10 ms probes both ways
// are ~0.16 Mbit/s, 1.6 model Gbps at the default scale.
constexpr double kIdleLinkGbps = 5;
constexpr std::chrono::seconds kKernelsFollowTimeout{30};

// Every facility of `facilities` reports `response`'s plan installed and at
// its routers.
bool AtEverySite(const v1::GetPlanResponse& response, const std::vector<std::string>& facilities) {
  std::set<std::string> sent;
  for (const v1::SiteInstallStatus& site : response.sites()) {
    if (site.generation() == response.plan().generation() && site.installed() && site.sent_to_routers()) {
      sent.insert(site.facility_id());
    }
  }
  return std::all_of(facilities.begin(), facilities.end(),
                     [&](const std::string& facility) { return sent.count(facility) > 0; });
}

// What one event's window (from its injection to the next event's, or to the
// end of the traffic) did to one stream.
struct StreamAtEvent {
  double loss_ms = 0;
  uint64_t packets_lost = 0;
  int64_t recovered_ns = 0;  // the first packet delivered after its first loss in the window
};

// The flows per elephant and their packet rate: as the options say while the
// whole stays within max_packets_per_second (two cores forward it); beyond,
// fewer packets per flow down to kMinFlowPacketsPerSecond, then fewer flows
// (at least 2), so a large backbone trades resolution for staying measurable.
constexpr double kMinFlowPacketsPerSecond = 25;
ElephantStreamOptions TrafficShape(const topology::Topology& topology, const NetnsDrillOptions& options) {
  size_t elephants = 0;
  for (const auto& workload : topology.workloads) elephants += workload.has_elephant() ? 1 : 0;
  ElephantStreamOptions shape{.flows = options.flows_per_elephant,
                              .packets_per_second_per_flow = options.packets_per_second_per_flow};
  if (elephants == 0) return shape;
  const double budget_per_elephant = options.max_packets_per_second / static_cast<double>(elephants);
  if (shape.flows * shape.packets_per_second_per_flow <= budget_per_elephant) return shape;
  shape.packets_per_second_per_flow = std::max(kMinFlowPacketsPerSecond, budget_per_elephant / shape.flows);
  if (shape.flows * shape.packets_per_second_per_flow > budget_per_elephant) {
    shape.flows = std::max<uint32_t>(2, static_cast<uint32_t>(budget_per_elephant / kMinFlowPacketsPerSecond));
  }
  return shape;
}

class NetnsTarget : public LiveDrillTarget {
 public:
  NetnsTarget(const DrillSpec& spec, NetnsLab& lab, const NetnsDrillOptions& options)
      : spec_(spec), lab_(lab), options_(options) {}

  ~NetnsTarget() override {
    traffic_.reset();  // killed without results when the drill stopped early
    monitor_.reset();
  }

  absl::Status SetLinksDown(const std::set<std::string>& links) override {
    for (const std::string& veth : Veths(links)) {
      if (auto status = lab_.SetFiberUp(veth, false); !status.ok()) return status;
      cut_.insert(veth);
    }
    return absl::OkStatus();
  }

  absl::Status DegradeLinks(const std::set<std::string>& links, const TimelineEvent& event) override {
    if (event.loss > 0) {
      for (const std::string& veth : Veths(links)) {
        if (auto status = lab_.SetLinkLoss(veth, event.loss * 100); !status.ok()) return status;
        lossy_.insert(veth);
      }
    }
    // No netem here: added latency reaches the model through the health
    // file; a degrade without loss is declared there too (the probes would
    // see nothing to degrade).
    if (event.added_latency_us > 0 || event.loss <= 0) {
      for (const std::string& link : links) {
        uint64_t rtt_us = 0;
        for (const auto& l : spec_.topology.links) {
          if (l.id() == link) rtt_us = 2 * (l.latency_us() + event.added_latency_us);
        }
        const std::string fields = event.loss > 0 ? absl::StrCat("rtt_us: ", rtt_us)
                                                  : absl::StrCat("state: degraded, rtt_us: ", rtt_us);
        if (auto status = lab_.lab().SetLinkHealth(link, fields); !status.ok()) return status;
        declared_.insert(link);
      }
    }
    return absl::OkStatus();
  }

  // Its daemons and router stopped, its links cut (the namespace stays, so
  // do the streams' senders and receivers there: what they lose is the
  // facility's traffic).
  absl::Status SetFacilityUp(const std::string& facility_id, bool up) override {
    if (absl::Status set = lab_.SetFacilityUp(facility_id, up); !set.ok()) return set;
    std::set<std::string> links;
    for (const auto& link : spec_.topology.links) {
      if (link.src_facility_id() == facility_id || link.dst_facility_id() == facility_id) links.insert(link.id());
    }
    for (const std::string& veth : Veths(links)) {
      if (up) {
        cut_.erase(veth);
      } else {
        cut_.insert(veth);
      }
    }
    return absl::OkStatus();
  }

  absl::Status RestoreLinks(const std::set<std::string>& links) override {
    for (const std::string& veth : Veths(links)) {
      if (cut_.erase(veth) > 0) {
        if (auto status = lab_.SetFiberUp(veth, true); !status.ok()) return status;
      }
      if (lossy_.erase(veth) > 0) {
        if (auto status = lab_.SetLinkLoss(veth, 0); !status.ok()) return status;
      }
    }
    for (const std::string& link : links) {
      if (declared_.erase(link) > 0) {
        if (auto status = lab_.lab().SetLinkHealth(link, ""); !status.ok()) return status;
      }
    }
    return absl::OkStatus();
  }

  // The baseline is installed: watch the kernels' routes, then start the
  // streams and wait until every one has delivered, so that what the events
  // do to them is all that is measured.
  absl::Status Begin(int64_t start_unix_ms) override {
    start_unix_ms_ = start_unix_ms;
    absl::StatusOr<NetnsRouteMonitorPtr> monitor =
        NetnsRouteMonitor::Start(lab_.backbone(), options_.work_dir + "/routes");
    if (!monitor.ok()) return monitor.status();
    monitor_ = *std::move(monitor);
    const ElephantStreamOptions shape = TrafficShape(spec_.topology, options_);
    absl::StatusOr<std::vector<TrafficStream>> streams = ElephantStreams(spec_.topology, options_.mbit_per_gbps, shape);
    if (!streams.ok()) return streams.status();
    resolution_ms_ = 1000.0 / shape.packets_per_second_per_flow;
    if (streams->empty()) return absl::OkStatus();  // a drill without elephant flows sends nothing
    absl::StatusOr<NetnsTrafficPtr> traffic = NetnsTraffic::Start(
        lab_.backbone(), {.binary_dir = options_.binary_dir + "/bin", .work_dir = options_.work_dir + "/traffic"},
        *std::move(streams));
    if (!traffic.ok()) return traffic.status();
    traffic_ = *std::move(traffic);
    return traffic_->WaitDelivering(std::chrono::seconds(30));
  }

  // The plan is installed everywhere: every kernel routes it, and each
  // link's rate on its veth over measure_ms, against the plan's elephant load.
  // The controller's plan may move on after the event settled (the lossy
  // fiber auto-drained after its hold, new measurements): the kernels are
  // held to the newest plan the controller reports at every site's routers,
  // and the rates to that plan's loads.
  absl::Status Settled(const v1::Plan& settled, v1::DrillEventOutcome& outcome) override {
    // routerd installed the plan in its routers; zebra installs it in the
    // kernel on its own time.
    v1::EventPackets& packets = *outcome.mutable_packets();
    v1::Plan plan = settled;
    std::vector<std::string> facilities;
    for (const auto& facility : spec_.topology.facilities) facilities.push_back(facility.id());
    const LabClient client(lab_.lab());
    std::vector<std::string> differing;
    absl::Status read = absl::OkStatus();
    // (Whether a re-plan is pending does not matter here: only what the
    // routers were given.)
    const auto newest_at_routers = [&] {
      if (absl::StatusOr<v1::GetPlanResponse> now = client.Plan();
          now.ok() && now->plan().generation() > plan.generation() && AtEverySite(*now, facilities)) {
        plan = now->plan();
      }
      return plan.generation();
    };
    bool moved = false;
    uint64_t compared_last = 0;
    const absl::Status followed = WaitUntil("every facility's kernel to route the plan at its routers", kKernelsFollowTimeout, [&] {
      const uint64_t compared = newest_at_routers();
      compared_last = compared;
      absl::StatusOr<std::vector<std::string>> now = lab_.KernelRoutesDiffering(plan);
      if (!now.ok()) read = now.status();
      differing = now.ok() ? *std::move(now) : std::vector<std::string>{};
      // A plan that reached the routers while the kernels were read says
      // nothing either way (some kernels may route it already): read again.
      moved = now.ok() && newest_at_routers() != compared;
      return !moved && (!now.ok() || differing.empty());
    });
    if (!read.ok()) return read;
    if (!followed.ok() && moved) {
      differing.push_back(absl::StrCat("generation ", plan.generation(), " reached every site's routers while the "
                                       "kernels were read against generation ", compared_last));
    }
    if (followed.ok()) {
      packets.set_kernels_follow_ms(
          static_cast<uint64_t>(std::max<int64_t>(0, NowMs() - start_unix_ms_ - static_cast<int64_t>(outcome.at_ms()))));
    }
    for (const std::string& route : differing) packets.add_kernel_routes_differing(route);
    if (traffic_ == nullptr) return absl::OkStatus();
    std::map<std::string, LinkCounters> before;
    for (const NetnsLink& link : lab_.backbone().links()) {
      absl::StatusOr<LinkCounters> counters = ReadLinkCounters(lab_.backbone(), link.forward_id);
      if (!counters.ok()) return counters.status();
      before[link.forward_id] = *counters;
    }
    const auto started = std::chrono::steady_clock::now();
    // The interval is what is measured: the counters are read again after it.
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.measure_ms));
    std::map<std::string, double> planned;
    for (const v1::LinkLoad& load : plan.elephants().links()) planned[load.link_id()] = load.load_gbps();
    for (const NetnsLink& link : lab_.backbone().links()) {
      absl::StatusOr<LinkCounters> after = ReadLinkCounters(lab_.backbone(), link.forward_id);
      if (!after.ok()) return after.status();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const LinkCounters& was = before[link.forward_id];
      for (const auto& [id, then, now] : {std::tuple{link.forward_id, was.a, after->a},
                                          std::tuple{link.reverse_id, was.b, after->b}}) {
        if (id.empty()) continue;
        const uint64_t frames = now.tx_packets - then.tx_packets;
        const uint64_t bytes = now.tx_bytes - then.tx_bytes;
        const uint64_t payload = bytes > frames * kHeaderBytes ? bytes - frames * kHeaderBytes : 0;
        absl::StatusOr<LinkRate> rate = RateOverInterval(payload, seconds, options_.mbit_per_gbps, 0);
        if (!rate.ok()) return rate.status();
        const double plan_gbps = planned.count(id) ? planned[id] : 0;
        if (plan_gbps == 0 && rate->model_gbps < kIdleLinkGbps) continue;  // probes only
        v1::LinkLoadCheck& check = *packets.add_link_loads();
        check.set_link_id(id);
        check.set_planned_gbps(plan_gbps);
        check.set_measured_gbps(rate->model_gbps);
        packets.set_max_link_load_error_gbps(
            std::max(packets.max_link_load_error_gbps(), std::abs(rate->model_gbps - plan_gbps)));
      }
    }
    return absl::OkStatus();
  }

  // The streams' results, set beside every event's window.
  absl::Status End(v1::DrillReport& report) override {
    v1::DrillPackets& totals = *report.mutable_packets();
    totals.set_mbit_per_gbps(options_.mbit_per_gbps);
    totals.set_resolution_ms(resolution_ms_);
    if (traffic_ == nullptr) return absl::OkStatus();
    const int64_t end_ms = NowMs();
    absl::StatusOr<TrafficResults> results = traffic_->Stop();
    if (!results.ok()) return results.status();
    totals.set_streams(static_cast<uint32_t>(results->streams.size()));
    for (const StreamResult& stream : results->streams) {
      totals.set_sent(totals.sent() + stream.sent);
      totals.set_received(totals.received() + stream.received);
    }
    totals.set_delivered_ratio(results->delivered_ratio);
    totals.set_receiver_socket_drops(results->receiver_socket_drops);
    for (int i = 0; i < report.events_size(); ++i) {
      v1::DrillEventOutcome& event = *report.mutable_events(i);
      const int64_t from_ms = start_unix_ms_ + static_cast<int64_t>(event.at_ms());
      const int64_t to_ms =
          i + 1 < report.events_size() ? start_unix_ms_ + static_cast<int64_t>(report.events(i + 1).at_ms()) : end_ms;
      v1::EventPackets& packets = *event.mutable_packets();
      packets.set_streams(static_cast<uint32_t>(results->streams.size()));
      for (const StreamResult& stream : results->streams) {
        const StreamAtEvent hit = AtEvent(stream, from_ms, to_ms);
        if (hit.loss_ms <= 0) continue;
        packets.set_streams_hit(packets.streams_hit() + 1);
        packets.set_packets_lost(packets.packets_lost() + hit.packets_lost);
        if (hit.recovered_ns > 0) {
          packets.set_last_recovered_ms(
              std::max<uint64_t>(packets.last_recovered_ms(), static_cast<uint64_t>(std::max<int64_t>(
                                                                  0, hit.recovered_ns / 1'000'000 - from_ms))));
        }
        if (hit.loss_ms > packets.max_loss_ms()) {
          packets.set_max_loss_ms(hit.loss_ms);
          packets.set_worst_stream(Name(stream.stream));
        }
      }
      if (auto status = FibChanges(event, from_ms, to_ms); !status.ok()) return status;
      if (packets.max_loss_ms() > totals.max_loss_ms()) {
        totals.set_max_loss_ms(packets.max_loss_ms());
        totals.set_worst(absl::StrCat(packets.worst_stream(), " at ", event.event()));
      }
    }
    return absl::OkStatus();
  }

 private:
  // The veths (by their forward link id) that `links` cross.
  std::set<std::string> Veths(const std::set<std::string>& links) const {
    std::set<std::string> veths;
    for (const std::string& link : links) {
      absl::StatusOr<NetnsLink> veth = lab_.backbone().Link(link);
      if (veth.ok()) veths.insert(veth->forward_id);
    }
    return veths;
  }

  static std::string Name(const TrafficStream& stream) {
    return absl::StrCat(stream.workload_id.empty() ? absl::StrCat("stream-", stream.id) : stream.workload_id, " ",
                        stream.from_facility, ">", stream.to_facility);
  }

  // The longest loss of `stream` that began in [from_ms, to_ms), and when
  // its first loss there ended.
  static StreamAtEvent AtEvent(const StreamResult& stream, int64_t from_ms, int64_t to_ms) {
    StreamAtEvent hit;
    const int64_t from_ns = from_ms * 1'000'000, to_ns = to_ms * 1'000'000;
    for (const TrafficOutage& outage : stream.outages) {
      // The first packet lost was sent one interval after the last that arrived.
      const int64_t began_ns = outage.last_before.send_ns + stream.interval_ns;
      if (began_ns < from_ns || began_ns >= to_ns) continue;
      if (hit.recovered_ns == 0) hit.recovered_ns = outage.first_after.receive_ns;
      hit.loss_ms = std::max(hit.loss_ms, outage.ms);
      hit.packets_lost += outage.packets;
    }
    return hit;
  }

  // The kernel route changes at the facilities of the event's links within its window.
  absl::Status FibChanges(v1::DrillEventOutcome& event, int64_t from_ms, int64_t to_ms) {
    const TimelineEvent* timeline = nullptr;
    for (const TimelineEvent& candidate : spec_.timeline) {
      if (candidate.Describe() == event.event()) timeline = &candidate;
    }
    if (timeline == nullptr || timeline->action == TimelineEvent::Action::kLeaderLoss) return absl::OkStatus();
    std::set<std::string> facilities;
    for (const std::string& link : pathcomp::LinksTakenDown(spec_.topology.links, timeline->Scope())) {
      for (const auto& l : spec_.topology.links) {
        if (l.id() == link) facilities.insert({l.src_facility_id(), l.dst_facility_id()});
      }
    }
    // The routes traffic follows: the facilities' prefixes (not the veths'
    // connected /31s, which go with the interface at once).
    std::set<std::string> prefixes;
    for (const auto& facility : spec_.topology.facilities) prefixes.insert(facility.prefixes().begin(), facility.prefixes().end());
    int64_t first_us = 0, last_us = 0;
    uint32_t count = 0;
    for (const std::string& facility : facilities) {
      absl::StatusOr<std::vector<RouteChange>> changes = monitor_->Changes(facility, from_ms);
      if (!changes.ok()) return changes.status();
      for (const RouteChange& change : *changes) {
        if (change.unix_us >= to_ms * 1000) break;
        if (!prefixes.count(change.prefix)) continue;
        ++count;
        first_us = first_us == 0 ? change.unix_us : std::min(first_us, change.unix_us);
        last_us = std::max(last_us, change.unix_us);
      }
    }
    v1::EventPackets& packets = *event.mutable_packets();
    packets.set_fib_changes(count);
    if (count > 0) {
      packets.set_fib_first_change_ms(static_cast<uint64_t>(std::max<int64_t>(0, first_us / 1000 - from_ms)));
      packets.set_fib_last_change_ms(static_cast<uint64_t>(std::max<int64_t>(0, last_us / 1000 - from_ms)));
    }
    return absl::OkStatus();
  }

  const DrillSpec& spec_;
  NetnsLab& lab_;
  const NetnsDrillOptions& options_;
  int64_t start_unix_ms_ = 0;
  double resolution_ms_ = 0;
  NetnsRouteMonitorPtr monitor_;
  NetnsTrafficPtr traffic_;
  std::set<std::string> cut_, lossy_;  // veths (forward ids) down / dropping packets
  std::set<std::string> declared_;     // directed links with health-file fields
};

}  // namespace

absl::StatusOr<v1::DrillReport> RunNetnsDrill(const DrillSpec& spec, const NetnsDrillOptions& options) {
  if (auto available = NetnsBackbone::Available(); !available.ok()) return available;
  if (auto available = NetnsRouterAvailable(); !available.ok()) return available;
  if (options.mbit_per_gbps <= 0 || options.flows_per_elephant == 0 || !(options.packets_per_second_per_flow > 0) ||
      options.measure_ms <= 0 || !(options.max_packets_per_second > 0)) {
    return absl::InvalidArgumentError(
        "netns drill: mbit_per_gbps, flows_per_elephant, packets_per_second_per_flow, measure_ms and "
        "max_packets_per_second must be positive");
  }
  absl::StatusOr<std::string> topology_path = WriteDrillTopology(spec, options.work_dir);
  if (!topology_path.ok()) return topology_path.status();
  NetnsLabOptions lab_options;
  lab_options.source_dir = options.source_dir;
  lab_options.binary_dir = options.binary_dir;
  lab_options.work_dir = options.work_dir + "/lab";
  lab_options.topology_path = *topology_path;
  lab_options.backbone.mbit_per_gbps = options.mbit_per_gbps;
  lab_options.probe_interval_ms = static_cast<int>(spec.reaction.probe_interval_ms);
  lab_options.probe_detect_multiplier = static_cast<int>(spec.reaction.detect_multiplier);
  lab_options.local_repair = options.local_repair;
  absl::StatusOr<NetnsLabPtr> lab = NetnsLab::Start(lab_options);
  if (!lab.ok()) return lab.status();
  absl::StatusOr<v1::DrillReport> report;
  {
    NetnsTarget target(spec, **lab, options);
    report = RunLiveDrillOn(spec, (*lab)->lab(), target, std::chrono::milliseconds(options.settle_timeout_ms));
  }
  if (options.before_teardown) options.before_teardown(**lab);
  return report;
}

}  // namespace geodesic::sim
