// pathcomp: the path-computation controller. Usage: pathcomp --config FILE
#include <cstdio>
#include <cstring>
#include <string>

#include "daemon/allocator.h"
#include "daemon/log.h"
#include "daemon/signals.h"
#include "pathcomp/service/pathcomp_config.h"
#include "pathcomp/service/pathcomp_server.h"

int main(int argc, char** argv) {
  using namespace geodesic;
  if (argc != 3 || std::strcmp(argv[1], "--config") != 0) {
    std::fprintf(stderr, "usage: pathcomp --config FILE\n");
    return 2;
  }
  daemon::KeepFreedMemoryForReuse();
  daemon::BlockTerminationSignals();
  daemon::SetLogDaemonName("pathcomp");
  auto config = pathcomp::LoadPathcompConfig(argv[2]);
  if (!config.ok()) {
    std::fprintf(stderr, "pathcomp: invalid configuration:\n%s\n",
                 std::string(config.status().message()).c_str());
    return 1;
  }
  auto server = pathcomp::PathcompServer::Start(*config);
  if (!server.ok()) {
    std::fprintf(stderr, "pathcomp: cannot start: %s\n",
                 std::string(server.status().message()).c_str());
    return 1;
  }
  const int signal_number = daemon::WaitForTerminationSignal();
  daemon::LogInfo("shutting down", {{"signal", std::to_string(signal_number)}});
  (*server)->Shutdown();
  return 0;
}
