// routerd: installs its facility's part of the plan into the site's routers.
// Usage: routerd --config FILE
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/log.h"
#include "daemon/signals.h"
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
  daemon::LogInfo("routerd started", {{"facility", config->facility_id},
                                      {"replicas", std::to_string(subscribers.size())}});
  daemon::WaitForTerminationSignal();
  daemon::LogInfo("shutting down; installed routes stay on the routers");
  for (auto& subscriber : subscribers) subscriber->Stop();
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
