// routerd: installs its facility's part of the plan into the site's routers.
// Usage: routerd --config FILE
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/clock.h"
#include "daemon/log.h"
#include "daemon/signals.h"
#include "local_events/local_event_listener.h"
#include "routerd/bgp/speaker.h"
#include "routerd/fail_static.h"
#include "routerd/local_repair_log.h"
#include "routerd/plan_installer.h"
#include "routerd/plan_subscriber.h"
#include "routerd/routerd_config.h"
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

// Watches controller contact: says loudly that routes are kept without a
// controller, and withdraws them once they are older than stale_after.
class FailStaticWatchdog {
 public:
  FailStaticWatchdog(ControllerContact& contact, PlanInstaller& installer) : contact_(contact), installer_(installer) {
    thread_ = std::thread([this] { Run(); });
  }
  ~FailStaticWatchdog() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void Run() {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; })) {
      const auto verdict = contact_.Check(std::chrono::steady_clock::now());
      using Action = ControllerContact::Verdict::Action;
      if (verdict.action == Action::kWarn) {
        daemon::LogError("fail-static: no controller reachable; keeping the installed routes",
                         {{"alone_for_s", std::to_string(verdict.alone_for.count())},
                          {"routes_expire_in_s", std::to_string(verdict.expires_in.count())},
                          {"generation", std::to_string(installer_.installed().generation())}});
      } else if (verdict.action == Action::kExpire) {
        if (auto status = installer_.ExpireAll("no controller reachable for " +
                                               std::to_string(verdict.alone_for.count()) + " s (fail_static.stale_after_s)");
            !status.ok()) {
          daemon::LogError("fail-static: cannot withdraw the expired routes", {{"error", status.ToString()}});
        }
      }
    }
  }

  ControllerContact& contact_;
  PlanInstaller& installer_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

int Run(const char* config_path) {
  auto config = LoadRouterdConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "routerd: invalid configuration:\n%s\n",
                 std::string(config.status().message()).c_str());
    return 1;
  }
  daemon::SetLogDaemonName("routerd/" + config->facility_id);
  if (auto status = CheckIdentity(*config); !status.ok()) {
    std::fprintf(stderr, "routerd: %s: %s\n", config_path, std::string(status.message()).c_str());
    return 1;
  }
  RouteInstallerPtr route_installer;
  if (config->bgp) {
    // Coming back with a stored plan: the routers still hold our routes
    // (graceful restart); say so in OPEN and re-announce before they give up.
    config->bgp->session.restarting = PlanInstaller::HasStoredPlan(config->state_dir, config->facility_id);
    route_installer = bgp::BgpSpeaker::Start(*config->bgp);
  } else {
    route_installer = NewLoggingRouteInstaller();
  }
  auto installer = PlanInstaller::Open(config->facility_id, config->state_dir, std::move(route_installer),
                                       config->suspect_down);
  if (!installer.ok()) {
    std::fprintf(stderr, "routerd: %s\n", std::string(installer.status().message()).c_str());
    return 1;
  }
  auto credentials = tls::MakeChannelCredentials(config->tls, tls::Identity::Kind::kPathcomp);
  ControllerContact contact(config->stale_after, std::chrono::steady_clock::now());
  std::vector<std::unique_ptr<PlanSubscriber>> subscribers;
  for (const auto& address : config->pathcomp_addresses) {
    subscribers.push_back(
        std::make_unique<PlanSubscriber>(config->facility_id, address, credentials, **installer, &contact));
    subscribers.back()->Start();
  }
  FailStaticWatchdog watchdog(contact, **installer);
  // The site agent's link events arrive here at once, without a controller:
  // local repair switches the affected prefixes to their precomputed backups.
  std::unique_ptr<local_events::LocalEventListener> agent_events;
  LocalRepairLog repairs(config->facility_id, config->state_dir);
  if (!config->agent_socket.empty()) {
    agent_events = std::make_unique<local_events::LocalEventListener>(
        local_events::ListenerOptions{.socket_path = config->agent_socket, .facility_id = config->facility_id},
        [&installer, &repairs](const v1::LocalLinkEvents& events) {
          for (const v1::LinkReport& report : events.links()) {
            daemon::LogInfo("local link event", {{"link", report.link_id()},
                                                 {"state", v1::OperState_Name(report.health().state())},
                                                 {"snapshot", events.snapshot() ? "true" : "false"}});
          }
          auto changed = (*installer)->ApplyLinkEvents(events);
          if (!changed.ok()) {
            daemon::LogError("local repair failed", {{"error", changed.status().ToString()}});
          } else if (*changed > 0) {
            if (auto recorded = repairs.Record((*installer)->down_links(), daemon::UnixNowMs(),
                                               static_cast<uint32_t>(*changed));
                !recorded.ok()) {
              daemon::LogWarn("cannot record the local repair", {{"error", recorded.ToString()}});
            }
          }
        });
    if (auto status = agent_events->Start(); !status.ok()) {
      std::fprintf(stderr, "routerd: agent_socket: %s\n", std::string(status.message()).c_str());
      return 1;
    }
  }
  daemon::LogInfo("routerd started", {{"facility", config->facility_id},
                                      {"replicas", std::to_string(subscribers.size())},
                                      {"agent_socket", config->agent_socket.empty() ? "none" : config->agent_socket}});
  daemon::WaitForTerminationSignal();
  daemon::LogInfo("shutting down; installed routes stay on the routers");
  for (auto& subscriber : subscribers) subscriber->Stop();
  if (agent_events) agent_events->Stop();
  return 0;
}

}  // namespace
}  // namespace geodesic::routerd

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--config") != 0) {
    std::fprintf(stderr, "usage: routerd --config FILE\n");
    return 2;
  }
  geodesic::daemon::BlockTerminationSignals();
  return geodesic::routerd::Run(argv[2]);
}
