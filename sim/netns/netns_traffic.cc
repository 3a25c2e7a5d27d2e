#include "sim/netns/netns_traffic.h"

#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"
#include "geodesic/v1/traffic.pb.h"
#include "sim/netns/link_counters.h"
#include "sim/wait_until.h"

namespace geodesic::sim {
namespace {

constexpr char kTrafficBinary[] = "geodesic-traffic";
// Senders and receivers run until Stop(); this only bounds a forgotten run.
constexpr char kRunSeconds[] = "86400";
constexpr uint32_t kToolMinBytes = 32;
constexpr uint32_t kToolMaxBytes = 9000;

bool IsV6(const std::string& prefix) { return prefix.find(':') != std::string::npos; }

bool HasPrefixOfFamily(const v1::Facility& facility, bool v6) {
  for (const std::string& prefix : facility.prefixes()) {
    if (IsV6(prefix) == v6) return true;
  }
  return false;
}

std::string Family(bool v6) { return v6 ? "IPv6" : "IPv4"; }

std::string HostAddress(const NetnsFacility& facility, bool v6) { return v6 ? facility.host_v6 : facility.host_v4; }

std::string Target(const std::string& address, bool v6, uint16_t port) {
  return v6 ? absl::StrCat("[", address, "]:", port) : absl::StrCat(address, ":", port);
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The tail of a child's log, for an error message.
std::string LogTail(const std::string& path) {
  const std::string log = ReadWholeFile(path);
  return log.size() > 500 ? log.substr(log.size() - 500) : log;
}

// Whether something in the facility's namespace is bound to address:port
// (UDP): a bind of our own there fails with EADDRINUSE. The receiver sets no
// SO_REUSEADDR/SO_REUSEPORT, so this is exact.
absl::StatusOr<bool> UdpPortTaken(const NetnsBackbone& backbone, const std::string& facility,
                                  const std::string& address, bool v6, uint16_t port) {
  absl::StatusOr<int> fd = backbone.OpenSocket(facility, v6 ? AF_INET6 : AF_INET, SOCK_DGRAM);
  if (!fd.ok()) return fd.status();
  sockaddr_storage storage = {};
  socklen_t length = 0;
  if (v6) {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&storage);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(port);
    inet_pton(AF_INET6, address.c_str(), &sin6->sin6_addr);
    length = sizeof(sockaddr_in6);
  } else {
    auto* sin = reinterpret_cast<sockaddr_in*>(&storage);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    inet_pton(AF_INET, address.c_str(), &sin->sin_addr);
    length = sizeof(sockaddr_in);
  }
  const int bound = bind(*fd, reinterpret_cast<sockaddr*>(&storage), length);
  const int bind_errno = errno;
  close(*fd);
  if (bound == 0) return false;
  if (bind_errno == EADDRINUSE) return true;
  return absl::InternalError(absl::StrCat("probing UDP ", Target(address, v6, port), " in ", facility, ": bind: ",
                                          std::strerror(bind_errno)));
}

template <typename Message>
absl::Status ParseReport(const std::string& path, const std::string& what, Message* message) {
  const std::string text = ReadWholeFile(path);
  if (text.empty()) return absl::InternalError(absl::StrCat(what, " wrote no report to ", path));
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (auto parsed = google::protobuf::util::JsonStringToMessage(text, message, options); !parsed.ok()) {
    return absl::InternalError(
        absl::StrCat(what, "'s report ", path, " does not parse: ", parsed.ToString(), ": ", text.substr(0, 200)));
  }
  return absl::OkStatus();
}

// Flow f of stream `id` on the wire (TrafficStream::flows).
uint32_t WireId(uint32_t id, uint32_t flow) { return id * kMaxStreamFlows + flow; }

TrafficDelivery ToDelivery(const v1::TrafficDelivery& delivery) {
  return {.sequence = delivery.sequence(), .send_ns = delivery.send_ns(), .receive_ns = delivery.receive_ns()};
}

}  // namespace

uint32_t StreamPacketBytes(double rate_mbps, double packets_per_second) {
  // N packets/s of B bytes carry B x 8 x N bit/s: B = rate_mbps x 1e6 / (8 N).
  const double bytes = packets_per_second > 0 ? std::floor(rate_mbps * 1e6 / (8 * packets_per_second)) : 0;
  if (!(bytes >= kMinStreamPacketBytes)) return kMinStreamPacketBytes;
  if (bytes > kMaxStreamPacketBytes) return kMaxStreamPacketBytes;
  return static_cast<uint32_t>(bytes);
}

absl::StatusOr<std::vector<TrafficStream>> ElephantStreams(const topology::Topology& topology, double mbit_per_gbps,
                                                           ElephantStreamOptions options) {
  if (!(mbit_per_gbps > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("scale of ", mbit_per_gbps, " Mbit/s per Gbps: must be > 0"));
  }
  if (options.flows < 1 || options.flows > kMaxStreamFlows) {
    return absl::InvalidArgumentError(absl::StrCat(options.flows, " flows per stream: must be 1..", kMaxStreamFlows));
  }
  if (!(options.packets_per_second_per_flow > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.packets_per_second_per_flow, " packets per second per flow: must be > 0"));
  }
  absl::flat_hash_map<std::string, const v1::Facility*> facility_by_id;
  absl::flat_hash_map<std::string, const v1::Facility*> facility_by_prefix;
  for (const v1::Facility& facility : topology.facilities) {
    facility_by_id[facility.id()] = &facility;
    for (const std::string& prefix : facility.prefixes()) facility_by_prefix[prefix] = &facility;
  }
  std::vector<TrafficStream> streams;
  for (const v1::Workload& workload : topology.workloads) {
    if (!workload.has_elephant()) continue;
    const v1::ElephantFlow& flow = workload.elephant();
    const std::string what = absl::StrCat("elephant workload ", workload.id());
    auto source = facility_by_id.find(flow.src_facility_id());
    if (source == facility_by_id.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": source facility \"", flow.src_facility_id(), "\" is not in the topology"));
    }
    auto destination = facility_by_prefix.find(flow.dst_prefix());
    if (destination == facility_by_prefix.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": no facility announces its dst_prefix ", flow.dst_prefix()));
    }
    const bool v6 = IsV6(flow.dst_prefix());
    if (!HasPrefixOfFamily(*source->second, v6)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": source facility ", source->second->id(), " has no ",
                                                     Family(v6), " prefix, so no host address to send from"));
    }
    if (!(flow.demand_gbps() > 0)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": demand of ", flow.demand_gbps(), " Gbps: must be > 0"));
    }
    const double rate_mbps = flow.demand_gbps() * mbit_per_gbps;
    streams.push_back(TrafficStream{.id = static_cast<uint32_t>(streams.size() + 1),
                                    .workload_id = workload.id(),
                                    .from_facility = source->second->id(),
                                    .to_facility = destination->second->id(),
                                    .v6 = v6,
                                    .rate_mbps = rate_mbps,
                                    .size_bytes = StreamPacketBytes(rate_mbps / options.flows,
                                                                    options.packets_per_second_per_flow),
                                    .flows = options.flows});
  }
  return streams;
}

const StreamResult* TrafficResults::Stream(uint32_t stream_id) const {
  for (const StreamResult& result : streams) {
    if (result.stream.id == stream_id) return &result;
  }
  return nullptr;
}

std::optional<TrafficOutage> TrafficResults::OutageSpanning(uint32_t stream_id, int64_t unix_ns) const {
  const StreamResult* result = Stream(stream_id);
  if (result == nullptr) return std::nullopt;
  for (const TrafficOutage& outage : result->outages) {
    if (outage.last_before.send_ns <= unix_ns && unix_ns < outage.first_after.send_ns) return outage;
  }
  return std::nullopt;
}

std::optional<TrafficDelivery> TrafficResults::FirstDeliveryAfter(uint32_t stream_id, int64_t unix_ns) const {
  std::optional<TrafficOutage> outage = OutageSpanning(stream_id, unix_ns);
  if (!outage) return std::nullopt;
  return outage->first_after;
}

absl::StatusOr<std::unique_ptr<NetnsTraffic>> NetnsTraffic::Start(const NetnsBackbone& backbone,
                                                                  NetnsTrafficOptions options,
                                                                  std::vector<TrafficStream> streams) {
  if (streams.empty()) return absl::InvalidArgumentError("no traffic streams to start");
  absl::flat_hash_set<uint32_t> ids;
  for (const TrafficStream& stream : streams) {
    const std::string what = absl::StrCat("traffic stream ", stream.id, " (", stream.from_facility, " -> ",
                                          stream.to_facility, ")");
    if (!ids.insert(stream.id).second) return absl::InvalidArgumentError(absl::StrCat(what, ": repeated id"));
    if (stream.id > kMaxStreamId) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": id over ", kMaxStreamId));
    }
    if (stream.flows < 1 || stream.flows > kMaxStreamFlows) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", stream.flows, " flows: must be 1..", kMaxStreamFlows));
    }
    for (const std::string& facility_id : {stream.from_facility, stream.to_facility}) {
      absl::StatusOr<NetnsFacility> facility = backbone.Facility(facility_id);
      if (!facility.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": ", facility.status().message()));
      }
      if (HostAddress(*facility, stream.v6).empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": facility ", facility_id, " has no ", Family(stream.v6), " host address"));
      }
    }
    if (!(stream.rate_mbps > 0)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": rate of ", stream.rate_mbps, " Mbit/s: must be > 0"));
    }
    if (stream.size_bytes < kToolMinBytes || stream.size_bytes > kToolMaxBytes) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": packets of ", stream.size_bytes, " bytes: must be ",
                                                     kToolMinBytes, "..", kToolMaxBytes));
    }
  }
  const std::string binary = absl::StrCat(options.binary_dir, "/", kTrafficBinary);
  if (access(binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("no executable ", binary, " (build geodesic-traffic)"));
  }
  std::error_code error;
  std::filesystem::create_directories(options.work_dir, error);
  if (error) {
    return absl::InternalError(absl::StrCat("making the traffic work directory ", options.work_dir, ": ",
                                            error.message()));
  }
  std::unique_ptr<NetnsTraffic> traffic(new NetnsTraffic(backbone, std::move(options), std::move(streams)));
  if (absl::Status started = traffic->StartReceivers(); !started.ok()) return started;
  if (absl::Status started = traffic->StartSenders(); !started.ok()) return started;
  return traffic;
}

absl::Status NetnsTraffic::StartReceivers() {
  const std::string binary = absl::StrCat(options_.binary_dir, "/", kTrafficBinary);
  for (const TrafficStream& stream : streams_) {
    const bool started = std::any_of(receivers_.begin(), receivers_.end(), [&](const Receiver& receiver) {
      return receiver.facility == stream.to_facility && receiver.v6 == stream.v6;
    });
    if (started) continue;
    const std::string name = absl::StrCat("receiver-", stream.to_facility, stream.v6 ? "-v6" : "-v4");
    const std::string address = HostAddress(*backbone_.Facility(stream.to_facility), stream.v6);
    Receiver receiver{.facility = stream.to_facility,
                      .v6 = stream.v6,
                      .report_path = absl::StrCat(options_.work_dir, "/", name, ".json"),
                      .process = nullptr};
    std::filesystem::remove(receiver.report_path);
    // The receivers run in real time (the lab is root): on a host busy with
    // other work, a receiver that waits its turn overflows its socket, which
    // would read as the network losing packets. Below the agents' probe
    // threads (10): the network's control plane goes first.
    absl::StatusOr<ChildProcessPtr> process = backbone_.Spawn(
        stream.to_facility,
        {binary, "receive", "--realtime-priority", "5", "--listen", Target(address, stream.v6, options_.port), "--duration-s", kRunSeconds,
         "--report", receiver.report_path, "--late-ms", absl::StrCat(options_.late_ms), "--outage-min-ms",
         absl::StrCat(options_.outage_min_ms)},
        absl::StrCat(options_.work_dir, "/", name, ".log"));
    if (!process.ok()) return process.status();
    receiver.process = *std::move(process);
    receivers_.push_back(std::move(receiver));
  }
  // Every receiver listens (or one has died) before any sender starts.
  for (Receiver& receiver : receivers_) {
    const std::string address = HostAddress(*backbone_.Facility(receiver.facility), receiver.v6);
    const std::string target = Target(address, receiver.v6, options_.port);
    absl::Status probe = absl::OkStatus();
    absl::Status listening = WaitUntil(
        absl::StrCat("geodesic-traffic to listen on ", target, " in ", receiver.facility), options_.start_timeout,
        [&] {
          if (!receiver.process->running()) return true;
          absl::StatusOr<bool> taken = UdpPortTaken(backbone_, receiver.facility, address, receiver.v6, options_.port);
          if (!taken.ok()) probe = taken.status();
          return !taken.ok() || *taken;
        });
    if (!probe.ok()) return probe;
    if (!receiver.process->running()) {
      return absl::InternalError(absl::StrCat("geodesic-traffic receive on ", target, " in ", receiver.facility,
                                              " exited: ", LogTail(receiver.process->log_path())));
    }
    if (!listening.ok()) {
      return absl::Status(listening.code(),
                          absl::StrCat(listening.message(), "; its log: ", LogTail(receiver.process->log_path())));
    }
  }
  return absl::OkStatus();
}

absl::Status NetnsTraffic::StartSenders() {
  const std::string binary = absl::StrCat(options_.binary_dir, "/", kTrafficBinary);
  for (const TrafficStream& stream : streams_) {
    const std::string source = HostAddress(*backbone_.Facility(stream.from_facility), stream.v6);
    const std::string destination = HostAddress(*backbone_.Facility(stream.to_facility), stream.v6);
    const std::string name = absl::StrCat("sender-", stream.id);
    Sender sender{.stream_id = stream.id,
                  .summary_path = absl::StrCat(options_.work_dir, "/", name, ".json"),
                  .process = nullptr};
    std::filesystem::remove(sender.summary_path);
    absl::StatusOr<ChildProcessPtr> process = backbone_.Spawn(
        stream.from_facility,
        {binary, "send", "--to", Target(destination, stream.v6, options_.port), "--bind", source, "--rate-mbps",
         absl::StrFormat("%.6f", stream.rate_mbps), "--size", absl::StrCat(stream.size_bytes), "--stream",
         absl::StrCat(WireId(stream.id, 0)), "--flows", absl::StrCat(stream.flows), "--duration-s", kRunSeconds,
         "--report", sender.summary_path},
        absl::StrCat(options_.work_dir, "/", name, ".log"));
    if (!process.ok()) return process.status();
    sender.process = *std::move(process);
    senders_.push_back(std::move(sender));
  }
  return absl::OkStatus();
}

absl::Status NetnsTraffic::WaitDelivering(std::chrono::milliseconds timeout) {
  std::vector<std::string> silent;
  const absl::Status delivering = WaitUntil("every flow of every stream to deliver a packet", timeout, [&] {
    absl::flat_hash_set<uint32_t> arrived;
    for (Receiver& receiver : receivers_) {
      receiver.process->Signal(SIGUSR1);  // its report so far, read at the next look
      v1::TrafficReceiverReport report;
      if (!ParseReport(receiver.report_path, "", &report).ok()) continue;  // none written yet
      for (const v1::TrafficReportStream& stream : report.streams()) {
        if (stream.received() > 0) arrived.insert(stream.stream());
      }
    }
    silent.clear();
    for (const TrafficStream& stream : streams_) {
      for (uint32_t flow = 0; flow < stream.flows; ++flow) {
        if (!arrived.contains(WireId(stream.id, flow))) {
          silent.push_back(absl::StrCat(stream.id, "/", flow, " (", stream.from_facility, ">", stream.to_facility, ")"));
        }
      }
    }
    return silent.empty();
  });
  if (delivering.ok()) return delivering;
  return absl::Status(delivering.code(), absl::StrCat(delivering.message(), "; silent flows (stream/flow): ",
                                                      absl::StrJoin(silent.begin(), silent.begin() + std::min<size_t>(silent.size(), 10), ", "),
                                                      silent.size() > 10 ? ", ..." : ""));
}

NetnsTraffic::~NetnsTraffic() {
  // Senders first, so the receivers do not outlive them; ChildProcess stops each.
  senders_.clear();
  receivers_.clear();
}

void NetnsTraffic::WaitForQueuesToDrain() const {
  // Best effort: a queue that does not empty in time only makes its packets count as lost.
  (void)WaitUntil("the links' queues to empty", options_.stop_timeout, [&] {
    for (const NetnsLink& link : backbone_.links()) {
      absl::StatusOr<LinkCounters> counters = ReadLinkCounters(backbone_, link.forward_id);
      if (!counters.ok()) return true;  // nothing to wait for that can be read
      if (counters->a.qdisc_backlog_packets > 0 || counters->b.qdisc_backlog_packets > 0) return false;
    }
    return true;
  });
}

absl::StatusOr<TrafficResults> NetnsTraffic::Stop() {
  if (stopped_) return absl::FailedPreconditionError("the traffic was already stopped");
  stopped_ = true;
  const int grace_ms = static_cast<int>(options_.stop_timeout.count());

  absl::flat_hash_map<uint32_t, v1::TrafficSendSummary> summaries;
  for (Sender& sender : senders_) {
    const std::string what = absl::StrCat("geodesic-traffic send of stream ", sender.stream_id);
    const int exit_code = sender.process->Stop(grace_ms);
    if (exit_code != 0) {
      return absl::InternalError(
          absl::StrCat(what, " exited ", exit_code, ": ", LogTail(sender.process->log_path())));
    }
    if (absl::Status parsed = ParseReport(sender.summary_path, what, &summaries[sender.stream_id]); !parsed.ok()) {
      return parsed;
    }
  }
  WaitForQueuesToDrain();

  absl::flat_hash_map<uint32_t, v1::TrafficReportStream> received;
  uint64_t socket_drops = 0;
  for (Receiver& receiver : receivers_) {
    const std::string what =
        absl::StrCat("geodesic-traffic receive in ", receiver.facility, " (", Family(receiver.v6), ")");
    const int exit_code = receiver.process->Stop(grace_ms);
    if (exit_code != 0) {
      return absl::InternalError(
          absl::StrCat(what, " exited ", exit_code, ": ", LogTail(receiver.process->log_path())));
    }
    v1::TrafficReceiverReport report;
    if (absl::Status parsed = ParseReport(receiver.report_path, what, &report); !parsed.ok()) return parsed;
    for (const v1::TrafficReportStream& stream : report.streams()) received[stream.stream()] = stream;
    socket_drops += report.socket_drops();
  }

  TrafficResults results;
  results.receiver_socket_drops = socket_drops;
  uint64_t total_sent = 0, total_received = 0;
  for (const TrafficStream& stream : streams_) {
    const v1::TrafficSendSummary& summary = summaries[stream.id];
    StreamResult result{.stream = stream};
    result.sent = summary.packets_sent();
    result.send_errors = summary.send_errors();
    result.interval_ns = summary.interval_ns() * stream.flows;
    uint64_t received_total = 0;
    for (uint32_t flow = 0; flow < stream.flows; ++flow) {
      // The sender took packet k for flow k % flows, as its sequence number k / flows.
      const uint64_t flow_sent = result.sent / stream.flows + (flow < result.sent % stream.flows ? 1 : 0);
      auto it = received.find(WireId(stream.id, flow));
      if (it == received.end()) {
        result.lost_at_end += flow_sent;
        continue;
      }
      const v1::TrafficReportStream& report = it->second;
      received_total += std::min<uint64_t>(report.received(), flow_sent);
      result.received += report.received();
      result.reordered += report.reordered();
      result.duplicates += report.duplicates();
      result.late += report.late();
      result.received_bytes += report.received_bytes();
      result.rate_mbps += report.rate_mbps();
      result.longest_gap_ms = std::max(result.longest_gap_ms, report.longest_gap_ms());
      result.outages_omitted += report.outages_omitted();
      if (flow_sent > report.highest_sequence() + 1) result.lost_at_end += flow_sent - report.highest_sequence() - 1;
      for (const v1::TrafficReportOutage& outage : report.outages()) {
        result.outages.push_back(TrafficOutage{.flow = flow,
                                               .first_missing = outage.first_missing(),
                                               .last_missing = outage.last_missing(),
                                               .packets = outage.packets(),
                                               .ms = outage.ms(),
                                               .last_before = ToDelivery(outage.last_before()),
                                               .first_after = ToDelivery(outage.first_after())});
      }
    }
    std::sort(result.outages.begin(), result.outages.end(), [](const TrafficOutage& a, const TrafficOutage& b) {
      return a.last_before.send_ns < b.last_before.send_ns;
    });
    result.lost = result.sent > result.received ? result.sent - result.received : 0;
    total_sent += result.sent;
    total_received += received_total;
    results.streams.push_back(std::move(result));
  }
  results.delivered_ratio = total_sent > 0 ? static_cast<double>(total_received) / total_sent : 0;
  return results;
}

}  // namespace geodesic::sim
