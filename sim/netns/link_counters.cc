#include "sim/netns/link_counters.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/netns/command_json.h"

namespace geodesic::sim {
namespace {

// Runs `argv` in the end's namespace and parses what it printed.
absl::StatusOr<google::protobuf::Value> ExecJson(const NetnsBackbone& backbone, const NetnsLinkEnd& end,
                                                 const std::vector<std::string>& argv) {
  const std::string command = absl::StrCat(absl::StrJoin(argv, " "), " in ", end.facility);
  absl::StatusOr<RunResult> result = backbone.Exec(end.facility, argv);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::InternalError(absl::StrCat(command, " exited ", result->exit_code, ": ", result->output));
  }
  return ParseCommandJson(result->output, command);
}

absl::StatusOr<LinkEndCounters> ReadEnd(const NetnsBackbone& backbone, const NetnsLinkEnd& end) {
  LinkEndCounters counters{.facility = end.facility, .interface = end.interface};
  absl::StatusOr<google::protobuf::Value> links =
      ExecJson(backbone, end, {"ip", "-j", "-s", "link", "show", "dev", end.interface});
  if (!links.ok()) return links.status();
  const google::protobuf::Value* stats = nullptr;
  if (links->list_value().values_size() == 1) stats = JsonField(links->list_value().values(0), "stats64");
  const google::protobuf::Value* tx = stats == nullptr ? nullptr : JsonField(*stats, "tx");
  const google::protobuf::Value* rx = stats == nullptr ? nullptr : JsonField(*stats, "rx");
  if (tx == nullptr || rx == nullptr) {
    return absl::InternalError(
        absl::StrCat("ip -j -s link show dev ", end.interface, " in ", end.facility, ": no stats64 tx/rx"));
  }
  counters.tx_bytes = static_cast<uint64_t>(JsonNumber(*tx, "bytes"));
  counters.tx_packets = static_cast<uint64_t>(JsonNumber(*tx, "packets"));
  counters.rx_bytes = static_cast<uint64_t>(JsonNumber(*rx, "bytes"));
  counters.rx_packets = static_cast<uint64_t>(JsonNumber(*rx, "packets"));

  absl::StatusOr<google::protobuf::Value> qdiscs =
      ExecJson(backbone, end, {"tc", "-j", "-s", "qdisc", "show", "dev", end.interface});
  if (!qdiscs.ok()) return qdiscs.status();
  for (const google::protobuf::Value& qdisc : qdiscs->list_value().values()) {
    counters.qdisc_drops += static_cast<uint64_t>(JsonNumber(qdisc, "drops"));
    counters.qdisc_overlimits += static_cast<uint64_t>(JsonNumber(qdisc, "overlimits"));
    counters.qdisc_backlog_packets += static_cast<uint64_t>(JsonNumber(qdisc, "qlen"));
  }
  return counters;
}

}  // namespace

absl::StatusOr<LinkCounters> ReadLinkCounters(const NetnsBackbone& backbone, const std::string& link_id) {
  absl::StatusOr<NetnsLink> link = backbone.Link(link_id);
  if (!link.ok()) return link.status();
  absl::StatusOr<LinkEndCounters> a = ReadEnd(backbone, link->a);
  if (!a.ok()) return a.status();
  absl::StatusOr<LinkEndCounters> b = ReadEnd(backbone, link->b);
  if (!b.ok()) return b.status();
  return LinkCounters{.link_id = link_id, .a = *std::move(a), .b = *std::move(b)};
}

absl::StatusOr<LinkRate> RateOverInterval(uint64_t bytes, double seconds, double mbit_per_gbps, double capacity_gbps) {
  if (!(seconds > 0)) return absl::InvalidArgumentError(absl::StrCat("interval of ", seconds, " s: must be > 0"));
  if (!(mbit_per_gbps > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("scale of ", mbit_per_gbps, " Mbit/s per Gbps: must be > 0"));
  }
  if (!(capacity_gbps >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("capacity of ", capacity_gbps, " Gbps: must be >= 0"));
  }
  LinkRate rate;
  rate.mbit_per_s = static_cast<double>(bytes) * 8 / seconds / 1e6;
  rate.model_gbps = rate.mbit_per_s / mbit_per_gbps;
  rate.utilization = capacity_gbps > 0 ? rate.model_gbps / capacity_gbps : 0;
  return rate;
}

}  // namespace geodesic::sim
