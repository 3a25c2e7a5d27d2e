// pathcomp: the path-computation controller.
// Usage: pathcomp --config FILE | --check-config FILE | --version (daemon/command_line.h)
#include <cstdio>
#include <string>

#include "daemon/allocator.h"
#include "daemon/command_line.h"
#include "daemon/admin_server.h"
#include "daemon/log.h"
#include "daemon/signals.h"
#include "daemon/version.h"
#include "metrics/metrics_registry.h"
#include "pathcomp/console/console_routes.h"
#include "pathcomp/service/pathcomp_config.h"
#include "pathcomp/service/pathcomp_server.h"

int main(int argc, char** argv) {
  using namespace geodesic;
  const daemon::CommandLine command = daemon::ParseCommandLine(
      {.name = "pathcomp",
       .summary = "the path-computation controller",
       .version = std::string(daemon::Version()),
       .check_config = [](const std::string& path) { return pathcomp::LoadPathcompConfig(path).status(); }},
      argc, argv);
  if (command.exit_code) return *command.exit_code;
  daemon::KeepFreedMemoryForReuse();
  daemon::BlockTerminationSignals();
  daemon::SetLogDaemonName("pathcomp");
  auto config = pathcomp::LoadPathcompConfig(command.config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "pathcomp: invalid configuration:\n%s\n",
                 std::string(config.status().message()).c_str());
    return 1;
  }
  metrics::Registry registry("pathcomp", {{"version", std::string(daemon::Version())}, {"replica", config->replica_id}});
  // Before the store opens, so probes see "starting" while a large model loads.
  auto listeners = daemon::DaemonListeners::Start(config->health_listen, config->metrics);
  if (!listeners.ok()) {
    std::fprintf(stderr, "pathcomp: cannot start: %s\n", std::string(listeners.status().message()).c_str());
    return 1;
  }
  listeners->AddRoute("/metrics", metrics::ScrapeHandler(registry));
  auto server = pathcomp::PathcompServer::Start(*config, registry);
  if (!server.ok()) {
    std::fprintf(stderr, "pathcomp: cannot start: %s\n",
                 std::string(server.status().message()).c_str());
    return 1;
  }
  listeners->SetChecks((*server)->health_checks());
  pathcomp::RegisterConsoleRoutes(*listeners, (*server)->state());
  const int signal_number = daemon::WaitForTerminationSignal();
  daemon::LogInfo("shutting down", {{"signal", std::to_string(signal_number)}});
  listeners->Stop();  // their checks and routes refer to the server
  (*server)->Shutdown();
  return 0;
}
