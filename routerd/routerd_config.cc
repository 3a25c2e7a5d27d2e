#include "routerd/routerd_config.h"

#include "config/config_reader.h"

namespace geodesic::routerd {

absl::StatusOr<RouterdConfig> LoadRouterdConfig(const std::string& path) {
  auto reader = config::ConfigReader::OpenFile(path);
  if (!reader.ok()) return reader.status();
  RouterdConfig config;
  config.facility_id = reader->RequiredId("facility");
  for (auto& replica : reader->RequiredMapList("pathcomp")) {
    config.pathcomp_addresses.push_back(replica.RequiredString("address"));
    replica.RejectUnknownKeys();
  }
  auto tls = reader->RequiredMap("tls");
  config.tls.ca_path = tls.RequiredPath("ca");
  config.tls.cert_path = tls.RequiredPath("cert");
  config.tls.key_path = tls.RequiredPath("key");
  tls.RejectUnknownKeys();
  config.state_dir = reader->RequiredPath("state_dir");
  reader->RejectUnknownKeys();
  if (auto status = reader->status(); !status.ok()) return status;
  return config;
}

}  // namespace geodesic::routerd
