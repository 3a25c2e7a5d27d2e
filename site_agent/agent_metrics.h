#pragma once
// Every Prometheus family of site_agent (geodesic_site_agent_*), declared on
// construction, so that the metric reference can be listed from a registry
// with no agent running (metrics::Registry::Families()).
//
// Owned: the probe RTT histogram, observed by the probe thread on every
// accepted reply. Scraped: everything read from the agent's state when
// /metrics is read — links, fabric planes, report streams, probe and local
// event counters; the agent binds each group once it has the state (Bind*),
// and Unbind()s before that state goes away. Until bound, a group has no
// samples.
//
// Label values are bounded by the configuration: link ids, replica
// addresses, plane indexes, and fixed sets of states and refusal reasons.
// Thread-safe; the read functions given to Bind* are called on the admin
// listener's threads and must be thread-safe.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "geodesic/v1/model.pb.h"
#include "metrics/metrics_registry.h"
#include "site_agent/probe/probe_engine.h"
#include "site_agent/report_stream.h"

namespace geodesic::site_agent {

// One link as the agent last reported it, and what it knows of its capacity.
struct LinkSample {
  std::string link_id;
  v1::LinkHealth health;
  double capacity_bytes_per_second = 0;  // 0: unknown (no configured capacity, no interface speed)
};

// One pathcomp replica's report stream.
struct ReplicaSample {
  std::string replica;  // the configured address
  ReportStreamStats stats;
};

// The local event channel to the site's routerd.
struct LocalEventsSample {
  bool connected = false;
  uint64_t messages_sent = 0;
};

class AgentMetrics {
 public:
  // Declares every family on `registry` (which must outlive this); a
  // registry holds one agent's families (declaring twice aborts).
  explicit AgentMetrics(metrics::Registry& registry);
  AgentMetrics(const AgentMetrics&) = delete;
  AgentMetrics& operator=(const AgentMetrics&) = delete;

  // The probe RTT histogram of one link (made on first use; thread-safe,
  // lock-free to observe).
  prometheus::Histogram& ProbeRtt(const std::string& link_id);

  void BindLinks(std::function<std::vector<LinkSample>()> read);
  void BindPlanes(std::function<std::vector<v1::FabricPlaneHealth>()> read);
  void BindReplicas(std::function<std::vector<ReplicaSample>()> read);
  void BindProbes(std::function<probe::ProbeCounters()> read);
  void BindLocalEvents(std::function<LocalEventsSample()> read);
  // Every scraped family back to no samples (their state is going away).
  void Unbind();

 private:
  metrics::HistogramFamily& probe_rtt_seconds_;
  // Links.
  metrics::ScrapedFamily& link_state_;
  metrics::ScrapedFamily& link_rtt_seconds_;
  metrics::ScrapedFamily& link_jitter_seconds_;
  metrics::ScrapedFamily& link_loss_ratio_;
  metrics::ScrapedFamily& link_utilization_ratio_;
  metrics::ScrapedFamily& link_capacity_bytes_per_second_;
  // Fabric planes.
  metrics::ScrapedFamily& fabric_plane_state_;
  metrics::ScrapedFamily& fabric_plane_failed_rails_;
  // Report streams, per replica.
  metrics::ScrapedFamily& reports_sent_total_;
  metrics::ScrapedFamily& reports_resent_total_;
  metrics::ScrapedFamily& reports_acked_total_;
  metrics::ScrapedFamily& report_snapshots_total_;
  metrics::ScrapedFamily& report_sessions_total_;
  metrics::ScrapedFamily& report_outbox_messages_;
  metrics::ScrapedFamily& pathcomp_connected_;
  // Probe engine.
  metrics::ScrapedFamily& probe_requests_sent_total_;
  metrics::ScrapedFamily& probe_requests_answered_total_;
  metrics::ScrapedFamily& probe_replies_accepted_total_;
  metrics::ScrapedFamily& probe_packets_refused_total_;
  // Local events to routerd.
  metrics::ScrapedFamily& routerd_connected_;
  metrics::ScrapedFamily& local_events_sent_total_;
};

}  // namespace geodesic::site_agent
