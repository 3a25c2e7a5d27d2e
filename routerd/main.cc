// routerd: installs its facility's part of the plan into the site's routers.
// Usage: routerd --config FILE | --check-config FILE | --version (daemon/command_line.h)
#include <cstdio>
#include <string>

#include "daemon/command_line.h"
#include "daemon/health_server.h"
#include "daemon/log.h"
#include "daemon/signals.h"
#include "daemon/version.h"
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
  auto health = daemon::StartHealthServerIfConfigured(config->health_listen);
  if (!health.ok()) {
    std::fprintf(stderr, "routerd: %s: %s\n", command.config_path.c_str(),
                 std::string(health.status().message()).c_str());
    return 1;
  }
  auto server = routerd::RouterdServer::Start(*std::move(config));
  if (!server.ok()) {
    std::fprintf(stderr, "routerd: %s: %s\n", command.config_path.c_str(),
                 std::string(server.status().message()).c_str());
    return 1;
  }
  if (*health) (*health)->SetChecks((*server)->health_checks());
  daemon::WaitForTerminationSignal();
  daemon::LogInfo("shutting down; installed routes stay on the routers");
  health->reset();  // its checks refer to the server
  (*server)->Shutdown();
  return 0;
}
