#include "routerd/routerd_metrics.h"

#include <utility>

namespace geodesic::routerd {
namespace {

using metrics::Sample;

// Binds `family` to one sample computed from what `read` returns.
template <typename State>
void BindOne(metrics::ScrapedFamily& family, const std::function<State()>& read,
             std::function<double(const State&)> value) {
  if (!read) {
    family.Bind({});
    return;
  }
  family.Bind([read, value = std::move(value)] { return std::vector<Sample>{{{}, value(read())}}; });
}

// Binds `family` to the samples `samples` makes of what `read` returns.
template <typename State>
void BindMany(metrics::ScrapedFamily& family, const std::function<State()>& read,
              std::function<std::vector<Sample>(const State&)> samples) {
  if (!read) {
    family.Bind({});
    return;
  }
  family.Bind([read, samples = std::move(samples)] { return samples(read()); });
}

}  // namespace

RouterdMetrics::RouterdMetrics(metrics::Registry& registry)
    : plan_installs_total_(
          registry.Counter("plan_installs_total", "Plans installed (passed fencing, sent to the route installer)")
              .Add({})),
      plans_refused_total_(registry.Counter(
          "plans_refused_total",
          "Plans offered and not installed, by reason: stale (not newer than the installed one), fenced_off (an "
          "older epoch), invalid (another facility's, malformed routes), install_failed (the route installer "
          "refused it)",
          {"reason"})),
      local_repairs_total_(registry.Counter(
          "local_repairs_total",
          "Local repairs: link events from the site agent that changed routes on the routers (onto the "
          "precomputed backups, or back when the links return)")
                               .Add({})),
      local_repair_routes_total_(
          registry.Counter("local_repair_routes_total", "Routes changed, withdrawn or restored by local repairs")
              .Add({})),
      local_repair_failures_total_(
          registry.Counter("local_repair_failures_total",
                           "Local repairs whose routes the route installer refused (the routes stay as they were)")
              .Add({})),
      local_repair_duration_seconds_(
          registry
              .Histogram("local_repair_duration_seconds",
                         "From a local repair's link events reaching the plan installer to the repaired routes "
                         "handed to the routers' sessions")
              .Add()),
      suspect_down_holds_total_(
          registry.Counter("suspect_down_holds_total",
                           "Link-down reports held as a suspect measurement (every link of the facility, or a burst, "
                           "down at once): the routes were kept as planned (fail static), not repaired")
              .Add({})),
      installed_plan_generation_(registry.ScrapedGauge(
          "installed_plan_generation", "Generation of the installed plan (0: none, or expired)")),
      installed_plan_epoch_(registry.ScrapedGauge("installed_plan_epoch",
                                                  "Controller epoch of the installed plan (the leader's fencing token)")),
      routes_on_routers_(registry.ScrapedGauge(
          "routes_on_routers", "Routes the routers have from routerd: the installed plan's, after local repair")),
      local_repair_down_links_(registry.ScrapedGauge(
          "local_repair_down_links", "Links reported down that local repair is acting on now")),
      suspect_down_links_(registry.ScrapedGauge("suspect_down_links",
                                                "Links reported down but held as a suspect measurement now")),
      fail_static_engaged_(registry.ScrapedGauge(
          "fail_static_engaged",
          "1 while no controller is connected and routerd keeps the installed routes on its own, else 0")),
      fail_static_remaining_seconds_(registry.ScrapedGauge(
          "fail_static_remaining_seconds",
          "How much longer the installed routes would be kept without a controller before they expire: "
          "fail_static.stale_after_s while one is connected, counting down while none is, 0 once expired")),
      controller_connected_(registry.ScrapedGauge(
          "controller_connected", "1 while the plan watch to the pathcomp replica is open, else 0", {"replica"})),
      bgp_session_up_(registry.ScrapedGauge("bgp_session_up",
                                            "1 while the BGP session to the router is Established, else 0", {"peer"})),
      bgp_session_state_(registry.ScrapedGauge(
          "bgp_session_state",
          "The BGP session's FSM state: 1 on the series of its current state, 0 on the others (state: Idle, "
          "Connect, OpenSent, OpenConfirm, Established)",
          {"peer", "state"})),
      bgp_sessions_established_total_(registry.ScrapedCounter(
          "bgp_sessions_established_total", "Times the BGP session reached Established (a rate is flapping)",
          {"peer"})),
      bgp_updates_sent_total_(registry.ScrapedCounter("bgp_updates_sent_total", "UPDATE messages sent to the router",
                                                      {"peer"})),
      bgp_updates_received_total_(registry.ScrapedCounter("bgp_updates_received_total",
                                                          "UPDATE messages received from the router", {"peer"})),
      bgp_prefixes_advertised_(registry.ScrapedGauge(
          "bgp_prefixes_advertised", "Prefixes the router has from routerd now (the session's Adj-RIB-Out)",
          {"peer"})),
      bgp_prefix_announcements_total_(registry.ScrapedCounter(
          "bgp_prefix_announcements_total", "Prefix announcements sent (a changed prefix is announced again)",
          {"peer"})),
      bgp_prefix_withdrawals_total_(
          registry.ScrapedCounter("bgp_prefix_withdrawals_total", "Prefix withdrawals sent", {"peer"})),
      bgp_prefixes_received_(registry.ScrapedGauge(
          "bgp_prefixes_received", "Prefixes the router sends routerd, held against max_prefixes (never installed)",
          {"peer"})),
      bgp_notifications_sent_total_(
          registry.ScrapedCounter("bgp_notifications_sent_total", "NOTIFICATION messages sent", {"peer"})),
      bgp_notifications_received_total_(
          registry.ScrapedCounter("bgp_notifications_received_total", "NOTIFICATION messages received", {"peer"})),
      bgp_treat_as_withdraw_total_(registry.ScrapedCounter(
          "bgp_treat_as_withdraw_total", "Received UPDATEs handled as treat-as-withdraw (RFC 7606)", {"peer"})),
      bgp_attributes_discarded_total_(registry.ScrapedCounter(
          "bgp_attributes_discarded_total", "Malformed path attributes discarded from received UPDATEs (RFC 7606)",
          {"peer"})),
      local_events_received_total_(registry.ScrapedCounter(
          "local_events_received_total", "Local link event messages accepted from the site agent")),
      local_events_refused_total_(registry.ScrapedCounter(
          "local_events_refused_total",
          "Local event messages or connections refused, by reason: peer (a user not allowed), malformed, "
          "oversized, wrong_facility, out_of_order, unknown_link",
          {"reason"})) {
  for (const char* reason : {"stale", "fenced_off", "invalid", "install_failed"}) {
    plans_refused_total_.Add({{"reason", reason}});  // every reason present from the start, at 0
  }
}

void RouterdMetrics::PlanOffered(const absl::StatusOr<PlanVerdict>& verdict) {
  const char* refused = nullptr;
  if (!verdict.ok()) {
    refused = verdict.status().code() == absl::StatusCode::kInvalidArgument ? "invalid" : "install_failed";
  } else if (*verdict == PlanVerdict::kStale) {
    refused = "stale";
  } else if (*verdict == PlanVerdict::kFencedOff) {
    refused = "fenced_off";
  }
  if (refused == nullptr) {
    plan_installs_total_.Increment();
  } else {
    plans_refused_total_.Add({{"reason", refused}}).Increment();
  }
}

void RouterdMetrics::LocalRepaired(size_t routes, std::chrono::nanoseconds took) {
  local_repairs_total_.Increment();
  local_repair_routes_total_.Increment(static_cast<double>(routes));
  local_repair_duration_seconds_.Observe(std::chrono::duration<double>(took).count());
}

void RouterdMetrics::LocalRepairFailed() { local_repair_failures_total_.Increment(); }

void RouterdMetrics::SuspectDownHeld() { suspect_down_holds_total_.Increment(); }

void RouterdMetrics::BindInstalledPlan(std::function<InstalledSummary()> read) {
  using Summary = InstalledSummary;
  BindOne<Summary>(installed_plan_generation_, read, [](const Summary& s) { return double(s.generation); });
  BindOne<Summary>(installed_plan_epoch_, read, [](const Summary& s) { return double(s.epoch); });
  BindOne<Summary>(routes_on_routers_, read, [](const Summary& s) { return double(s.routes_on_routers); });
  BindOne<Summary>(local_repair_down_links_, read, [](const Summary& s) { return double(s.down_links); });
  BindOne<Summary>(suspect_down_links_, read, [](const Summary& s) { return double(s.suspect_links); });
}

void RouterdMetrics::BindControllers(std::function<ControllersSample()> read) {
  BindOne<ControllersSample>(fail_static_engaged_, read,
                             [](const ControllersSample& s) { return s.fail_static_engaged ? 1.0 : 0.0; });
  BindOne<ControllersSample>(fail_static_remaining_seconds_, read,
                             [](const ControllersSample& s) { return s.fail_static_remaining_seconds; });
  BindMany<ControllersSample>(controller_connected_, read, [](const ControllersSample& s) {
    std::vector<Sample> samples;
    for (const auto& [replica, connected] : s.replicas) samples.push_back({{{"replica", replica}}, connected ? 1.0 : 0.0});
    return samples;
  });
}

void RouterdMetrics::BindBgpPeers(std::function<std::vector<bgp::PeerStatus>()> read) {
  using Peers = std::vector<bgp::PeerStatus>;
  auto per_peer = [&read](metrics::ScrapedFamily& family, double (*value)(const bgp::PeerStatus&)) {
    BindMany<Peers>(family, read, [value](const Peers& peers) {
      std::vector<Sample> samples;
      for (const bgp::PeerStatus& peer : peers) samples.push_back({{{"peer", peer.peer}}, value(peer)});
      return samples;
    });
  };
  per_peer(bgp_session_up_, [](const bgp::PeerStatus& p) {
    return p.state == bgp::StateName(bgp::BgpSession::State::kEstablished) ? 1.0 : 0.0;
  });
  BindMany<Peers>(bgp_session_state_, read, [](const Peers& peers) {
    std::vector<Sample> samples;
    for (const bgp::PeerStatus& peer : peers) {
      for (bgp::BgpSession::State state : bgp::kSessionStates) {
        const std::string name = bgp::StateName(state);
        samples.push_back({{{"peer", peer.peer}, {"state", name}}, peer.state == name ? 1.0 : 0.0});
      }
    }
    return samples;
  });
  per_peer(bgp_sessions_established_total_, [](const bgp::PeerStatus& p) { return double(p.established_count); });
  per_peer(bgp_updates_sent_total_, [](const bgp::PeerStatus& p) { return double(p.updates_sent); });
  per_peer(bgp_updates_received_total_, [](const bgp::PeerStatus& p) { return double(p.updates_received); });
  per_peer(bgp_prefixes_advertised_, [](const bgp::PeerStatus& p) { return double(p.prefixes_advertised); });
  per_peer(bgp_prefix_announcements_total_, [](const bgp::PeerStatus& p) { return double(p.prefixes_announced); });
  per_peer(bgp_prefix_withdrawals_total_, [](const bgp::PeerStatus& p) { return double(p.prefixes_withdrawn); });
  per_peer(bgp_prefixes_received_, [](const bgp::PeerStatus& p) { return double(p.prefixes_received); });
  per_peer(bgp_notifications_sent_total_, [](const bgp::PeerStatus& p) { return double(p.notifications_sent); });
  per_peer(bgp_notifications_received_total_,
           [](const bgp::PeerStatus& p) { return double(p.notifications_received); });
  per_peer(bgp_treat_as_withdraw_total_, [](const bgp::PeerStatus& p) { return double(p.treat_as_withdraw); });
  per_peer(bgp_attributes_discarded_total_,
           [](const bgp::PeerStatus& p) { return double(p.attributes_discarded); });
}

void RouterdMetrics::BindLocalEvents(std::function<local_events::ListenerCounters()> read) {
  using Counters = local_events::ListenerCounters;
  BindOne<Counters>(local_events_received_total_, read, [](const Counters& c) { return double(c.messages); });
  BindMany<Counters>(local_events_refused_total_, read, [](const Counters& c) {
    return std::vector<Sample>{{{{"reason", "peer"}}, double(c.rejected_peer)},
                               {{{"reason", "malformed"}}, double(c.malformed)},
                               {{{"reason", "oversized"}}, double(c.oversized)},
                               {{{"reason", "wrong_facility"}}, double(c.wrong_facility)},
                               {{{"reason", "out_of_order"}}, double(c.out_of_order)},
                               {{{"reason", "unknown_link"}}, double(c.unknown_link)}};
  });
}

void RouterdMetrics::Unbind() {
  BindInstalledPlan({});
  BindControllers({});
  BindBgpPeers({});
  BindLocalEvents({});
}

}  // namespace geodesic::routerd
