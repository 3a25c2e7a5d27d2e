// site_agent: measures a facility's backbone links and reports them to pathcomp.
// Usage: site_agent --config FILE
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "daemon/log.h"
#include "daemon/signals.h"
#include "site_agent/agent_config.h"
#include "site_agent/site_agent.h"

int main(int argc, char** argv) {
  using namespace geodesic;
  if (argc != 3 || std::strcmp(argv[1], "--config") != 0) {
    std::fprintf(stderr, "usage: site_agent --config FILE\n");
    return 2;
  }
  daemon::BlockTerminationSignals();
  auto config = site_agent::LoadAgentConfig(argv[2]);
  if (!config.ok()) {
    std::fprintf(stderr, "site_agent: invalid configuration:\n%s\n",
                 std::string(config.status().message()).c_str());
    return 1;
  }
  daemon::SetLogDaemonName("site_agent/" + config->facility_id);
  auto agent = site_agent::SiteAgent::Create(*config);
  if (!agent.ok()) {
    std::fprintf(stderr, "site_agent: %s: %s\n", argv[2],
                 std::string(agent.status().message()).c_str());
    return 1;
  }
  std::thread waiter([&] {
    daemon::WaitForTerminationSignal();
    (*agent)->Stop();
  });
  (*agent)->Run();
  waiter.join();
  return 0;
}
