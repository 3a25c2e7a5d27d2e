// routerd: installs its facility's part of the plan into the site's routers.
// Usage: routerd --config FILE
#include <cstdio>
#include <cstring>
#include <string>

#include "daemon/log.h"
#include "daemon/signals.h"
#include "routerd/routerd_config.h"
#include "routerd/routerd_server.h"

int main(int argc, char** argv) {
  using namespace geodesic;
  if (argc != 3 || std::strcmp(argv[1], "--config") != 0) {
    std::fprintf(stderr, "usage: routerd --config FILE\n");
    return 2;
  }
  daemon::BlockTerminationSignals();
  auto config = routerd::LoadRouterdConfig(argv[2]);
  if (!config.ok()) {
    std::fprintf(stderr, "routerd: invalid configuration:\n%s\n",
                 std::string(config.status().message()).c_str());
    return 1;
  }
  daemon::SetLogDaemonName("routerd/" + config->facility_id);
  auto server = routerd::RouterdServer::Start(*std::move(config));
  if (!server.ok()) {
    std::fprintf(stderr, "routerd: %s: %s\n", argv[2], std::string(server.status().message()).c_str());
    return 1;
  }
  daemon::WaitForTerminationSignal();
  daemon::LogInfo("shutting down; installed routes stay on the routers");
  (*server)->Shutdown();
  return 0;
}
