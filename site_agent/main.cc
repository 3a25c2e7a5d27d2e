// site_agent: measures a facility's backbone links and reports them to pathcomp.
// Usage: site_agent --config FILE | --check-config FILE | --version (daemon/command_line.h)
#include <cstdio>
#include <string>
#include <thread>

#include "daemon/command_line.h"
#include "daemon/health_server.h"
#include "daemon/log.h"
#include "daemon/signals.h"
#include "daemon/version.h"
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
  auto health = daemon::StartHealthServerIfConfigured(config->health_listen);
  if (!health.ok()) {
    std::fprintf(stderr, "site_agent: %s: %s\n", command.config_path.c_str(),
                 std::string(health.status().message()).c_str());
    return 1;
  }
  auto agent = site_agent::SiteAgent::Create(*config);
  if (!agent.ok()) {
    std::fprintf(stderr, "site_agent: %s: %s\n", command.config_path.c_str(),
                 std::string(agent.status().message()).c_str());
    return 1;
  }
  if (*health) (*health)->SetChecks((*agent)->health_checks());
  std::thread waiter([&] {
    daemon::WaitForTerminationSignal();
    (*agent)->Stop();
  });
  (*agent)->Run();
  waiter.join();
  health->reset();  // its checks refer to the agent
  return 0;
}
