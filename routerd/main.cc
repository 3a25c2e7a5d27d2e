// routerd: installs its facility's part of the plan into the site's routers.
// Usage: routerd --config FILE
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/log.h"
#include "daemon/signals.h"
#include "local_events/local_event_listener.h"
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
  auto installer =
      PlanInstaller::Open(config->facility_id, config->state_dir, NewLoggingRouteInstaller());
  if (!installer.ok()) {
    std::fprintf(stderr, "routerd: %s\n", std::string(installer.status().message()).c_str());
    return 1;
  }
  auto credentials = tls::MakeChannelCredentials(config->tls, tls::Identity::Kind::kPathcomp);
  std::vector<std::unique_ptr<PlanSubscriber>> subscribers;
  for (const auto& address : config->pathcomp_addresses) {
    subscribers.push_back(
        std::make_unique<PlanSubscriber>(config->facility_id, address, credentials, **installer));
    subscribers.back()->Start();
  }
  // The site agent's link events arrive here at once, without a controller.
  // Today they are logged; local repair (switching the affected prefixes to
  // their precomputed backups) acts on them with the BGP speaker.
  std::unique_ptr<local_events::LocalEventListener> agent_events;
  if (!config->agent_socket.empty()) {
    agent_events = std::make_unique<local_events::LocalEventListener>(
        local_events::ListenerOptions{.socket_path = config->agent_socket, .facility_id = config->facility_id},
        [](const v1::LocalLinkEvents& events) {
          for (const v1::LinkReport& report : events.links()) {
            daemon::LogInfo("local link event", {{"link", report.link_id()},
                                                 {"state", v1::OperState_Name(report.health().state())},
                                                 {"snapshot", events.snapshot() ? "true" : "false"}});
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
