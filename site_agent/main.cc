// site_agent: measures a facility's backbone links and reports them to pathcomp.
// Usage: site_agent --config FILE | --check-config FILE | --version (daemon/command_line.h)
#include <cstdio>
#include <string>
#include <thread>

#include "daemon/command_line.h"
#include "daemon/admin_server.h"
#include "daemon/log.h"
#include "daemon/signals.h"
#include "daemon/version.h"
#include "metrics/metrics_registry.h"
#include "site_agent/agent_config.h"
#include "site_agent/site_agent.h"

int main(int argc, char** argv) {
  using namespace geodesic;
  const daemon::CommandLine command = daemon::ParseCommandLine(
      {.name = "site_agent",
       .summary = "measures a facility's backbone links and reports them to pathcomp",
       .version = std::string(daemon::Version()),
       .check_config = [](const std::string& path) { return site_agent::LoadAgentConfig(path).status(); }},
      argc, argv);
  if (command.exit_code) return *command.exit_code;
  daemon::BlockTerminationSignals();
  auto config = site_agent::LoadAgentConfig(command.config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "site_agent: invalid configuration:\n%s\n",
                 std::string(config.status().message()).c_str());
    return 1;
  }
  daemon::SetLogDaemonName("site_agent/" + config->facility_id);
  metrics::Registry registry("site_agent", {{"version", std::string(daemon::Version())}, {"facility", config->facility_id}});
  auto listeners = daemon::DaemonListeners::Start(config->health_listen, config->metrics);
  if (!listeners.ok()) {
    std::fprintf(stderr, "site_agent: %s: %s\n", command.config_path.c_str(),
                 std::string(listeners.status().message()).c_str());
    return 1;
  }
  listeners->AddRoute("/metrics", metrics::ScrapeHandler(registry));
  auto agent = site_agent::SiteAgent::Create(*config, registry);
  if (!agent.ok()) {
    std::fprintf(stderr, "site_agent: %s: %s\n", command.config_path.c_str(),
                 std::string(agent.status().message()).c_str());
    return 1;
  }
  listeners->SetChecks((*agent)->health_checks());
  std::thread waiter([&] {
    daemon::WaitForTerminationSignal();
    (*agent)->Stop();
  });
  (*agent)->Run();
  waiter.join();
  listeners->Stop();  // their checks refer to the agent
  return 0;
}
