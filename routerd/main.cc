// routerd: installs its facility's part of the plan into the site's routers.
// Usage: routerd --config FILE | --check-config FILE | --version (daemon/command_line.h)
#include <cstdio>
#include <string>

#include "daemon/command_line.h"
#include "daemon/admin_server.h"
#include "daemon/log.h"
#include "daemon/signals.h"
#include "daemon/version.h"
#include "metrics/metrics_registry.h"
#include "routerd/routerd_config.h"
#include "routerd/routerd_server.h"

int main(int argc, char** argv) {
  using namespace geodesic;
  const daemon::CommandLine command = daemon::ParseCommandLine(
      {.name = "routerd",
       .summary = "installs its facility's part of the plan into the site's routers",
       .version = std::string(daemon::Version()),
       .check_config = [](const std::string& path) { return routerd::LoadRouterdConfig(path).status(); }},
      argc, argv);
  if (command.exit_code) return *command.exit_code;
  daemon::BlockTerminationSignals();
  auto config = routerd::LoadRouterdConfig(command.config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "routerd: invalid configuration:\n%s\n",
                 std::string(config.status().message()).c_str());
    return 1;
  }
  daemon::SetLogDaemonName("routerd/" + config->facility_id);
  metrics::Registry registry("routerd", {{"version", std::string(daemon::Version())}, {"facility", config->facility_id}});
  auto listeners = daemon::DaemonListeners::Start(config->health_listen, config->metrics);
  if (!listeners.ok()) {
    std::fprintf(stderr, "routerd: %s: %s\n", command.config_path.c_str(),
                 std::string(listeners.status().message()).c_str());
    return 1;
  }
  listeners->AddRoute("/metrics", metrics::ScrapeHandler(registry));
  auto server = routerd::RouterdServer::Start(*std::move(config), registry);
  if (!server.ok()) {
    std::fprintf(stderr, "routerd: %s: %s\n", command.config_path.c_str(),
                 std::string(server.status().message()).c_str());
    return 1;
  }
  listeners->SetChecks((*server)->health_checks());
  daemon::WaitForTerminationSignal();
  daemon::LogInfo("shutting down; installed routes stay on the routers");
  listeners->Stop();  // their checks refer to the server
  (*server)->Shutdown();
  return 0;
}
