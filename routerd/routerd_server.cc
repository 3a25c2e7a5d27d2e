#include "routerd/routerd_server.h"

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/clock.h"
#include "daemon/log.h"
#include "local_events/local_event_listener.h"
#include "routerd/bgp/speaker.h"
#include "routerd/fail_static.h"
#include "routerd/local_repair_log.h"
#include "routerd/plan_installer.h"
#include "routerd/plan_subscriber.h"
#include "routerd/routerd_metrics.h"
#include "tls/credentials.h"

namespace geodesic::routerd {
namespace {

absl::Status CheckIdentity(const RouterdConfig& config) {
  if (auto status = tls::ValidateTlsFiles(config.tls); !status.ok()) return status;
  auto identity = tls::ReadCertificateIdentity(config.tls.cert_path);
  if (!identity.ok()) return identity.status();
  if (identity->kind != tls::Identity::Kind::kRouterd ||
      identity->facility_id != config.facility_id) {
    return absl::InvalidArgumentError(absl::StrCat("facility: \"", config.facility_id,
                                                   "\" does not match the certificate ",
                                                   config.tls.cert_path, " (",
                                                   identity->spiffe_id, ")"));
  }
  return absl::OkStatus();
}

class RouterdServerImpl final : public RouterdServer {
 public:
  // `metrics` is the one `installer` counts into; `speaker` (may be null)
  // is the installer's route installer when it speaks BGP.
  RouterdServerImpl(RouterdConfig config, std::unique_ptr<RouterdMetrics> metrics,
                    std::unique_ptr<PlanInstaller> installer, const bgp::BgpSpeaker* speaker)
      : config_(std::move(config)),
        metrics_(std::move(metrics)),
        installer_(std::move(installer)),
        speaker_(speaker),
        contact_(config_.stale_after, std::chrono::steady_clock::now()),
        watchdog_(contact_, *installer_) {}

  ~RouterdServerImpl() override {
    metrics_->Unbind();  // the scraped families read the members below
    Shutdown();
  }

  absl::Status Start() {
    auto credentials = tls::MakeChannelCredentials(config_.tls, tls::Identity::Kind::kPathcomp);
    for (const auto& address : config_.pathcomp_addresses) {
      subscribers_.push_back(
          std::make_unique<PlanSubscriber>(config_.facility_id, address, credentials, *installer_, &contact_));
      subscribers_.back()->Start();
    }
    // The site agent's link events arrive here at once, without a controller:
    // local repair switches the affected prefixes to their precomputed backups.
    if (!config_.agent_socket.empty()) {
      agent_events_ = std::make_unique<local_events::LocalEventListener>(
          local_events::ListenerOptions{.socket_path = config_.agent_socket, .facility_id = config_.facility_id},
          [this](const v1::LocalLinkEvents& events) { ApplyLocalEvents(events); });
      if (auto status = agent_events_->Start(); !status.ok()) {
        return absl::Status(status.code(), absl::StrCat("agent_socket: ", status.message()));
      }
    }
    BindMetrics();
    daemon::LogInfo("routerd started", {{"facility", config_.facility_id},
                                        {"replicas", std::to_string(subscribers_.size())},
                                        {"agent_socket", config_.agent_socket.empty() ? "none" : config_.agent_socket},
                                        {"local_repair", config_.local_repair ? "on" : "off"}});
    return absl::OkStatus();
  }

  daemon::HealthChecks health_checks() override {
    return {.live = [this] { return watchdog_.heartbeat().Check("fail-static watchdog loop", std::chrono::seconds(10)); },
            .ready = [this] { return Readiness(); }};
  }

  daemon::HealthVerdict Readiness() const {
    const uint64_t generation = installer_->installed_generation();
    const size_t connected = contact_.connected_count();
    const std::string controllers =
        absl::StrCat(connected, " of ", config_.pathcomp_addresses.size(), " controllers connected");
    if (generation == 0) return {.ok = false, .reason = absl::StrCat("no plan installed yet; ", controllers)};
    return {.ok = true, .reason = absl::StrCat("plan generation ", generation, " installed",
                                               connected == 0 ? " (fail-static); " : "; ", controllers)};
  }

  void Shutdown() override {
    for (auto& subscriber : subscribers_) subscriber->Stop();
    if (agent_events_) agent_events_->Stop();
  }

 private:
  // Every scraped family of metrics_ to the state it reports.
  void BindMetrics() {
    metrics_->BindInstalledPlan([this] { return installer_->summary(); });
    metrics_->BindControllers([this] {
      const auto now = std::chrono::steady_clock::now();
      const std::set<std::string> connected = contact_.connected();
      ControllersSample sample{
          .fail_static_engaged = connected.empty() && installer_->installed_generation() > 0,
          .fail_static_remaining_seconds = std::chrono::duration<double>(contact_.FailStaticRemaining(now)).count(),
          .replicas = {}};
      for (const std::string& address : config_.pathcomp_addresses) {
        sample.replicas.emplace_back(address, connected.contains(address));
      }
      return sample;
    });
    if (speaker_ != nullptr) metrics_->BindBgpPeers([this] { return speaker_->Status(); });
    if (agent_events_) metrics_->BindLocalEvents([this] { return agent_events_->counters(); });
  }

  void ApplyLocalEvents(const v1::LocalLinkEvents& events) {
    for (const v1::LinkReport& report : events.links()) {
      daemon::LogInfo("local link event", {{"link", report.link_id()},
                                           {"state", v1::OperState_Name(report.health().state())},
                                           {"snapshot", events.snapshot() ? "true" : "false"}});
    }
    if (!config_.local_repair) return;  // routes follow the controller's plans alone
    auto changed = installer_->ApplyLinkEvents(events);
    if (!changed.ok()) {
      daemon::LogError("local repair failed", {{"error", changed.status().ToString()}});
    } else if (*changed > 0) {
      // After the routers have the repaired routes: tests and drills time a
      // repair by asking routerd's state, not by reading its log.
      if (auto recorded = repairs_.Record(installer_->down_links(), daemon::UnixNowMs(),
                                          static_cast<uint32_t>(*changed));
          !recorded.ok()) {
        daemon::LogWarn("cannot record the local repair", {{"error", recorded.ToString()}});
      }
    }
  }

  const RouterdConfig config_;
  LocalRepairLog repairs_{config_.facility_id, config_.state_dir};  // written by agent_events_'s callback
  const std::unique_ptr<RouterdMetrics> metrics_;  // before installer_, which counts into it
  std::unique_ptr<PlanInstaller> installer_;
  const bgp::BgpSpeaker* const speaker_;  // owned by installer_; null without BGP
  ControllerContact contact_;
  FailStaticWatchdog watchdog_;
  std::vector<std::unique_ptr<PlanSubscriber>> subscribers_;
  std::unique_ptr<local_events::LocalEventListener> agent_events_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RouterdServer>> RouterdServer::Start(RouterdConfig config,
                                                                   metrics::Registry& registry) {
  if (auto status = CheckIdentity(config); !status.ok()) return status;
  auto metrics = std::make_unique<RouterdMetrics>(registry);
  RouteInstallerPtr route_installer;
  const bgp::BgpSpeaker* speaker = nullptr;
  if (config.bgp) {
    // Coming back with a stored plan: the routers still hold our routes
    // (graceful restart); say so in OPEN and re-announce before they give up.
    config.bgp->session.restarting = PlanInstaller::HasStoredPlan(config.state_dir, config.facility_id);
    std::unique_ptr<bgp::BgpSpeaker> started = bgp::BgpSpeaker::Start(*config.bgp);
    speaker = started.get();
    route_installer = std::move(started);
  } else {
    route_installer = NewLoggingRouteInstaller();
  }
  auto installer = PlanInstaller::Open(config.facility_id, config.state_dir, std::move(route_installer),
                                       config.suspect_down, metrics.get());
  if (!installer.ok()) return installer.status();
  auto server =
      std::make_unique<RouterdServerImpl>(std::move(config), std::move(metrics), *std::move(installer), speaker);
  if (auto status = server->Start(); !status.ok()) return status;
  return server;
}

}  // namespace geodesic::routerd
