#include "routerd/routerd_config.h"

#include "config/config_reader.h"
#include "config/shared_keys.h"

namespace geodesic::routerd {

absl::StatusOr<RouterdConfig> LoadRouterdConfig(const std::string& path) {
  auto reader = config::ConfigReader::OpenFile(path);
  if (!reader.ok()) return reader.status();
  RouterdConfig config;
  config.facility_id = reader->RequiredId("facility");
  config.pathcomp_addresses = config::ReadPathcompReplicas(*reader);
  config.tls = config::ReadTlsKeys(*reader);
  config.state_dir = reader->RequiredPath("state_dir");
  config.agent_socket = reader->OptionalPath("agent_socket", "");
  reader->RejectUnknownKeys();
  if (auto status = reader->status(); !status.ok()) return status;
  return config;
}

}  // namespace geodesic::routerd
