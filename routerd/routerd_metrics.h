#pragma once
// Every Prometheus family of routerd (geodesic_routerd_*), declared on
// construction, so that the metric reference can be listed from a registry
// with no routerd running (metrics::Registry::Families()).
//
// Owned, updated as things happen (by PlanInstaller): plans installed and
// refused, local repairs (counted and timed), suspect-down holds. Scraped,
// read from routerd's state when /metrics is read: the installed plan, fail
// static and the controllers, the BGP sessions (BgpSpeaker::Status), the
// site agent's local events; routerd binds each group once it has the state
// (Bind*) and Unbind()s before that state goes away. Until bound, a group
// has no samples.
//
// Label values are bounded by the configuration: BGP peers
// ("address:port"), pathcomp replica addresses, and fixed sets of states and
// reasons. Thread-safe; the read functions given to Bind* are called on the
// admin listener's threads and must be thread-safe.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "local_events/local_event_listener.h"
#include "metrics/metrics_registry.h"
#include "routerd/bgp/session.h"
#include "routerd/plan_installer.h"

namespace geodesic::routerd {

// Fail static and the controllers, as routerd sees them now.
struct ControllersSample {
  bool fail_static_engaged = false;  // no controller connected, and routes installed are being kept
  double fail_static_remaining_seconds = 0;  // ControllerContact::FailStaticRemaining
  std::vector<std::pair<std::string, bool>> replicas;  // every configured replica: connected?
};

class RouterdMetrics {
 public:
  // Declares every family on `registry` (which must outlive this); a
  // registry holds one routerd's families (declaring twice aborts).
  explicit RouterdMetrics(metrics::Registry& registry);
  RouterdMetrics(const RouterdMetrics&) = delete;
  RouterdMetrics& operator=(const RouterdMetrics&) = delete;

  // What PlanInstaller::Offer decided: an install, or a refusal (stale,
  // fenced off, invalid, or the routers' side failed).
  void PlanOffered(const absl::StatusOr<PlanVerdict>& verdict);
  // A local repair changed `routes` on the routers within `took`.
  void LocalRepaired(size_t routes, std::chrono::nanoseconds took);
  // A local repair could not hand its routes to the routers.
  void LocalRepairFailed();
  // A link-event report was held as a suspect measurement (suspect_down.h).
  void SuspectDownHeld();

  void BindInstalledPlan(std::function<InstalledSummary()> read);
  void BindControllers(std::function<ControllersSample()> read);
  void BindBgpPeers(std::function<std::vector<bgp::PeerStatus>()> read);
  void BindLocalEvents(std::function<local_events::ListenerCounters()> read);
  // Every scraped family back to no samples (their state is going away).
  void Unbind();

 private:
  // Owned.
  prometheus::Counter& plan_installs_total_;
  prometheus::Family<prometheus::Counter>& plans_refused_total_;
  prometheus::Counter& local_repairs_total_;
  prometheus::Counter& local_repair_routes_total_;
  prometheus::Counter& local_repair_failures_total_;
  prometheus::Histogram& local_repair_duration_seconds_;
  prometheus::Counter& suspect_down_holds_total_;
  // The installed plan.
  metrics::ScrapedFamily& installed_plan_generation_;
  metrics::ScrapedFamily& installed_plan_epoch_;
  metrics::ScrapedFamily& routes_on_routers_;
  metrics::ScrapedFamily& local_repair_down_links_;
  metrics::ScrapedFamily& suspect_down_links_;
  // Fail static and the controllers.
  metrics::ScrapedFamily& fail_static_engaged_;
  metrics::ScrapedFamily& fail_static_remaining_seconds_;
  metrics::ScrapedFamily& controller_connected_;
  // BGP sessions, per peer.
  metrics::ScrapedFamily& bgp_session_up_;
  metrics::ScrapedFamily& bgp_session_state_;
  metrics::ScrapedFamily& bgp_sessions_established_total_;
  metrics::ScrapedFamily& bgp_updates_sent_total_;
  metrics::ScrapedFamily& bgp_updates_received_total_;
  metrics::ScrapedFamily& bgp_prefixes_advertised_;
  metrics::ScrapedFamily& bgp_prefix_announcements_total_;
  metrics::ScrapedFamily& bgp_prefix_withdrawals_total_;
  metrics::ScrapedFamily& bgp_prefixes_received_;
  metrics::ScrapedFamily& bgp_notifications_sent_total_;
  metrics::ScrapedFamily& bgp_notifications_received_total_;
  metrics::ScrapedFamily& bgp_treat_as_withdraw_total_;
  metrics::ScrapedFamily& bgp_attributes_discarded_total_;
  // The site agent's local events.
  metrics::ScrapedFamily& local_events_received_total_;
  metrics::ScrapedFamily& local_events_refused_total_;
};

}  // namespace geodesic::routerd
