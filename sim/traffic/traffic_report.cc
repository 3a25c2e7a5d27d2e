#include "sim/traffic/traffic_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "text/json_quote.h"

namespace geodesic::traffic {
namespace {

std::string Number(double value) { return absl::StrFormat("%.3f", value); }

std::string DeliveryJson(const Delivery& delivery) {
  return absl::StrCat("{\"sequence\": ", delivery.sequence, ", \"send_ns\": ", delivery.send_time_ns,
                      ", \"receive_ns\": ", delivery.receive_time_ns, "}");
}

std::string OutagesJson(const StreamStats& stream, double outage_min_ms) {
  std::string out = "[";
  const char* separator = "";
  size_t listed = 0;
  size_t omitted = 0;
  for (const StreamGap& gap : stream.Gaps()) {
    if (gap.ms < outage_min_ms) continue;
    if (listed == kMaxOutagesPerStream) {
      ++omitted;
      continue;
    }
    ++listed;
    absl::StrAppend(&out, separator, "{\"first_missing\": ", gap.first_missing, ", \"last_missing\": ",
                    gap.last_missing, ", \"packets\": ", gap.packets, ", \"ms\": ", Number(gap.ms),
                    ", \"wall_ms\": ", Number(gap.wall_ms), ", \"last_before\": ", DeliveryJson(gap.before),
                    ", \"first_after\": ", DeliveryJson(gap.after), "}");
    separator = ", ";
  }
  absl::StrAppend(&out, "], \"outages_omitted\": ", omitted);
  return out;
}

std::string StreamJson(const StreamStats& stream, const ReceiverReportContext& context) {
  const StreamSummary s = stream.Summary();
  const double active_s = static_cast<double>(s.last_receive_ns - s.first_receive_ns) / 1e9;
  // Over n arrivals the span covers n-1 intervals; count n-1 packets' bytes.
  const double rate_mbps =
      active_s > 0 && s.received > 1
          ? static_cast<double>(s.received_bytes) * (s.received - 1) / s.received * 8 / active_s / 1e6
          : 0;
  std::string out = absl::StrCat(
      "{\"stream\": ", s.stream_id, ", \"first_sequence\": ", s.first_sequence,
      ", \"highest_sequence\": ", s.highest_sequence, ", \"received\": ", s.received, ", \"lost\": ", s.lost,
      ", \"reordered\": ", s.reordered, ", \"duplicates\": ", s.duplicates, ", \"late\": ", s.late,
      ", \"received_bytes\": ", s.received_bytes, ", \"rate_mbps\": ", Number(rate_mbps),
      ", \"interval_ns\": ", s.interval_ns, ", \"max_one_way_delay_ms\": ", Number(s.max_one_way_delay_ns / 1e6),
      ", \"unbinned\": ", s.unbinned);
  if (s.longest_gap) {
    const StreamGap& gap = *s.longest_gap;
    absl::StrAppend(&out, ", \"longest_gap_packets\": ", gap.packets, ", \"longest_gap_ms\": ", Number(gap.ms),
                    ", \"longest_gap_wall_ms\": ", Number(gap.wall_ms), ", \"longest_gap\": {\"first_missing\": ",
                    gap.first_missing, ", \"last_missing\": ", gap.last_missing,
                    ", \"last_before_receive_ns\": ", gap.before.receive_time_ns,
                    ", \"first_after_receive_ns\": ", gap.after.receive_time_ns, "}");
  } else {
    absl::StrAppend(&out, ", \"longest_gap_packets\": 0, \"longest_gap_ms\": 0.000, \"longest_gap_wall_ms\": 0.000",
                    ", \"longest_gap\": null");
  }
  absl::StrAppend(&out, ", \"outages\": ", OutagesJson(stream, context.outage_min_ms));
  if (context.bins) {
    absl::StrAppend(&out, ", \"bin_columns\": [\"start_ms\", \"received\", \"lost\", \"reordered\", \"late\", "
                          "\"duplicates\"], \"bins\": [");
    const char* separator = "";
    for (const StreamBin& bin : stream.Bins()) {
      absl::StrAppend(&out, separator, "[", bin.start_ms, ", ", bin.received, ", ", bin.lost, ", ", bin.reordered,
                      ", ", bin.late, ", ", bin.duplicates, "]");
      separator = ", ";
    }
    absl::StrAppend(&out, "]");
  }
  absl::StrAppend(&out, "}");
  return out;
}

}  // namespace

std::string FormatReceiverReport(const StreamReceiverStats& stats, const ReceiverReportContext& context) {
  std::string out = absl::StrCat("{\"late_after_ms\": ", Number(context.late_after_ms),
                                 ", \"duration_s\": ", Number(context.duration_s),
                                 ", \"socket_drops\": ", context.socket_drops, ", \"rejected\": {");
  const char* separator = "";
  for (PacketRejection rejection :
       {PacketRejection::kTooShort, PacketRejection::kBadMagic, PacketRejection::kSizeMismatch}) {
    absl::StrAppend(&out, separator, text::JsonQuote(PacketRejectionName(rejection)), ": ",
                    stats.rejected(rejection));
    separator = ", ";
  }
  absl::StrAppend(&out, "},\n \"streams\": [");
  separator = "\n  ";
  for (const auto& [id, stream] : stats.streams()) {
    absl::StrAppend(&out, separator, StreamJson(stream, context));
    separator = ",\n  ";
  }
  absl::StrAppend(&out, "]}\n");
  return out;
}

std::string FormatSendSummary(const SendSummary& summary) {
  return absl::StrCat(
      "{\"stream\": ", summary.stream_id, ", \"flows\": ", summary.flows, ", \"to\": ", text::JsonQuote(summary.to),
      ", \"target_rate_mbps\": ", Number(summary.target_rate_mbps), ", \"size_bytes\": ", summary.size_bytes,
      ", \"interval_ns\": ", summary.interval_ns, ", \"packets_sent\": ", summary.packets_sent,
      ", \"send_errors\": ", summary.send_errors, ", \"skipped_slots\": ", summary.skipped_slots,
      ", \"duration_s\": ", Number(summary.duration_s), ", \"rate_mbps\": ", Number(summary.rate_mbps), "}\n");
}

}  // namespace geodesic::traffic
