#include "site_agent/agent_metrics.h"

#include <string>
#include <utility>

#include "entity/oper_state_name.h"

namespace geodesic::site_agent {
namespace {

using metrics::Sample;

constexpr v1::OperState kStates[] = {v1::OPER_STATE_UNKNOWN, v1::OPER_STATE_UP, v1::OPER_STATE_DEGRADED,
                                     v1::OPER_STATE_DOWN};

// Binds `family` to one sample per item of what `read` returns.
template <typename Item>
void BindEach(metrics::ScrapedFamily& family, std::function<std::vector<Item>()> read,
              std::function<void(const Item&, std::vector<Sample>&)> samples) {
  if (!read) {
    family.Bind({});
    return;
  }
  family.Bind([read = std::move(read), samples = std::move(samples)] {
    std::vector<Sample> out;
    for (const Item& item : read()) samples(item, out);
    return out;
  });
}

// One sample per state, 1 for `current` (so each state's series stays put and
// `== 1` selects the state).
void StateSamples(metrics::Labels labels, v1::OperState current, std::vector<Sample>& out) {
  for (v1::OperState state : kStates) {
    labels["state"] = entity::OperStateName(state);
    out.push_back({labels, state == current ? 1.0 : 0.0});
  }
}

double Seconds(uint64_t microseconds) { return static_cast<double>(microseconds) / 1e6; }

}  // namespace

AgentMetrics::AgentMetrics(metrics::Registry& registry)
    : probe_rtt_seconds_(registry.Histogram(
          "probe_rtt_seconds", "Round trip of every answered probe, per link (the responder's own time excluded)",
          {"link"})),
      link_state_(registry.ScrapedGauge(
          "link_state",
          "The link's state as last reported: 1 on the series of its current state, 0 on the others "
          "(state: unknown, up, degraded, down)",
          {"link", "state"})),
      link_rtt_seconds_(registry.ScrapedGauge(
          "link_rtt_seconds", "The link's RTT as last reported (median of the probe window, or configured)", {"link"})),
      link_jitter_seconds_(registry.ScrapedGauge("link_jitter_seconds",
                                                 "The link's RTT jitter as last reported (probe window)", {"link"})),
      link_loss_ratio_(registry.ScrapedGauge("link_loss_ratio",
                                             "Share of the link's probes lost, 0-1, as last reported", {"link"})),
      link_utilization_ratio_(registry.ScrapedGauge(
          "link_utilization_ratio", "The link's transmit utilization, 0-1 of its capacity, as last reported",
          {"link"})),
      link_capacity_bytes_per_second_(registry.ScrapedGauge(
          "link_capacity_bytes_per_second",
          "The link's capacity (configured, else its interface's speed); absent when the agent does not know it",
          {"link"})),
      fabric_plane_state_(registry.ScrapedGauge(
          "fabric_plane_state",
          "The DC fabric plane's health as last reported: 1 on the series of its current state, 0 on the others "
          "(state: unknown, up, degraded, down)",
          {"plane", "state"})),
      fabric_plane_failed_rails_(registry.ScrapedGauge("fabric_plane_failed_rails",
                                                       "Rails of the fabric plane reported down", {"plane"})),
      reports_sent_total_(registry.ScrapedCounter(
          "reports_sent_total",
          "Report messages written to the replica's stream (snapshot batches, sync markers, deltas), resends included",
          {"replica"})),
      reports_resent_total_(registry.ScrapedCounter(
          "reports_resent_total", "Report messages written again after a reconnect because no ack had come back",
          {"replica"})),
      reports_acked_total_(registry.ScrapedCounter(
          "reports_acked_total", "Report messages the replica acknowledged (or said it had applied at a reconnect)",
          {"replica"})),
      report_snapshots_total_(registry.ScrapedCounter(
          "report_snapshots_total",
          "Full-state snapshots queued for the replica: its first session, an outbox overflow, a replica that lost "
          "this agent's state",
          {"replica"})),
      report_sessions_total_(registry.ScrapedCounter(
          "report_sessions_total",
          "Report sessions the replica accepted: the first and every reconnect (a rate above 0 is a flapping stream)",
          {"replica"})),
      report_outbox_messages_(registry.ScrapedGauge(
          "report_outbox_messages", "Report messages waiting for the replica's ack (bounded by outbox_limit)",
          {"replica"})),
      pathcomp_connected_(registry.ScrapedGauge(
          "pathcomp_connected", "1 while a report session to the replica is open, else 0", {"replica"})),
      probe_requests_sent_total_(registry.ScrapedCounter("probe_requests_sent_total",
                                                         "Probe requests sent, all links together")),
      probe_requests_answered_total_(registry.ScrapedCounter("probe_requests_answered_total",
                                                             "Probe requests of the peers answered")),
      probe_replies_accepted_total_(registry.ScrapedCounter(
          "probe_replies_accepted_total", "Replies to this agent's probes accepted (and measured)")),
      probe_packets_refused_total_(registry.ScrapedCounter(
          "probe_packets_refused_total",
          "Probe packets refused, by reason: unknown_peer, malformed, replay, unexpected_reply (wrong session, "
          "unknown, late or repeated seq)",
          {"reason"})),
      routerd_connected_(registry.ScrapedGauge(
          "routerd_connected", "1 while the local event channel to the site's routerd is connected, else 0; absent "
                               "when routerd_socket is not configured")),
      local_events_sent_total_(registry.ScrapedCounter(
          "local_events_sent_total", "Local link event messages sent to the site's routerd")) {}

prometheus::Histogram& AgentMetrics::ProbeRtt(const std::string& link_id) {
  return probe_rtt_seconds_.Add({{"link", link_id}});
}

void AgentMetrics::BindLinks(std::function<std::vector<LinkSample>()> read) {
  auto bind = [&read](metrics::ScrapedFamily& family, std::function<void(const LinkSample&, std::vector<Sample>&)> f) {
    BindEach<LinkSample>(family, read, std::move(f));
  };
  bind(link_state_, [](const LinkSample& link, std::vector<Sample>& out) {
    StateSamples({{"link", link.link_id}}, link.health.state(), out);
  });
  bind(link_rtt_seconds_, [](const LinkSample& link, std::vector<Sample>& out) {
    out.push_back({{{"link", link.link_id}}, Seconds(link.health.rtt_us())});
  });
  bind(link_jitter_seconds_, [](const LinkSample& link, std::vector<Sample>& out) {
    out.push_back({{{"link", link.link_id}}, Seconds(link.health.jitter_us())});
  });
  bind(link_loss_ratio_, [](const LinkSample& link, std::vector<Sample>& out) {
    out.push_back({{{"link", link.link_id}}, link.health.loss_ratio()});
  });
  bind(link_utilization_ratio_, [](const LinkSample& link, std::vector<Sample>& out) {
    out.push_back({{{"link", link.link_id}}, link.health.utilization_ratio()});
  });
  bind(link_capacity_bytes_per_second_, [](const LinkSample& link, std::vector<Sample>& out) {
    if (link.capacity_bytes_per_second > 0) out.push_back({{{"link", link.link_id}}, link.capacity_bytes_per_second});
  });
}

void AgentMetrics::BindPlanes(std::function<std::vector<v1::FabricPlaneHealth>()> read) {
  BindEach<v1::FabricPlaneHealth>(fabric_plane_state_, read,
                                  [](const v1::FabricPlaneHealth& plane, std::vector<Sample>& out) {
                                    StateSamples({{"plane", std::to_string(plane.plane())}}, plane.state(), out);
                                  });
  BindEach<v1::FabricPlaneHealth>(fabric_plane_failed_rails_, std::move(read),
                                  [](const v1::FabricPlaneHealth& plane, std::vector<Sample>& out) {
                                    out.push_back({{{"plane", std::to_string(plane.plane())}},
                                                   static_cast<double>(plane.failed_rails_size())});
                                  });
}

void AgentMetrics::BindReplicas(std::function<std::vector<ReplicaSample>()> read) {
  auto bind = [&read](metrics::ScrapedFamily& family, auto value) {
    BindEach<ReplicaSample>(family, read, [value](const ReplicaSample& replica, std::vector<Sample>& out) {
      out.push_back({{{"replica", replica.replica}}, static_cast<double>(value(replica.stats))});
    });
  };
  bind(reports_sent_total_, [](const ReportStreamStats& stats) { return stats.messages_sent; });
  bind(reports_resent_total_, [](const ReportStreamStats& stats) { return stats.messages_resent; });
  bind(reports_acked_total_, [](const ReportStreamStats& stats) { return stats.messages_acked; });
  bind(report_snapshots_total_, [](const ReportStreamStats& stats) { return stats.snapshots; });
  bind(report_sessions_total_, [](const ReportStreamStats& stats) { return stats.sessions_opened; });
  bind(report_outbox_messages_, [](const ReportStreamStats& stats) { return stats.outbox_messages; });
  bind(pathcomp_connected_, [](const ReportStreamStats& stats) { return stats.connected ? 1 : 0; });
}

void AgentMetrics::BindProbes(std::function<probe::ProbeCounters()> read) {
  auto bind = [&read](metrics::ScrapedFamily& family, auto samples) {
    if (!read) {
      family.Bind({});
      return;
    }
    family.Bind([read, samples] { return samples(read()); });
  };
  bind(probe_requests_sent_total_, [](const probe::ProbeCounters& counters) {
    return std::vector<Sample>{{{}, static_cast<double>(counters.requests_sent)}};
  });
  bind(probe_requests_answered_total_, [](const probe::ProbeCounters& counters) {
    return std::vector<Sample>{{{}, static_cast<double>(counters.requests_answered)}};
  });
  bind(probe_replies_accepted_total_, [](const probe::ProbeCounters& counters) {
    return std::vector<Sample>{{{}, static_cast<double>(counters.replies_accepted)}};
  });
  bind(probe_packets_refused_total_, [](const probe::ProbeCounters& counters) {
    return std::vector<Sample>{
        {{{"reason", "unknown_peer"}}, static_cast<double>(counters.rejected_unknown_peer)},
        {{{"reason", "malformed"}}, static_cast<double>(counters.rejected_malformed)},
        {{{"reason", "replay"}}, static_cast<double>(counters.rejected_replay)},
        {{{"reason", "unexpected_reply"}}, static_cast<double>(counters.rejected_unexpected_reply)}};
  });
}

void AgentMetrics::BindLocalEvents(std::function<LocalEventsSample()> read) {
  if (!read) {
    routerd_connected_.Bind({});
    local_events_sent_total_.Bind({});
    return;
  }
  routerd_connected_.Bind([read] { return std::vector<Sample>{{{}, read().connected ? 1.0 : 0.0}}; });
  local_events_sent_total_.Bind(
      [read] { return std::vector<Sample>{{{}, static_cast<double>(read().messages_sent)}}; });
}

void AgentMetrics::Unbind() {
  BindLinks({});
  BindPlanes({});
  BindReplicas({});
  BindProbes({});
  BindLocalEvents({});
}

}  // namespace geodesic::site_agent
