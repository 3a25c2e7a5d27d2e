#include "pathcomp/service/pathcomp_config.h"

#include "config/config_reader.h"
#include "config/shared_keys.h"

namespace geodesic::pathcomp {

absl::StatusOr<PathcompConfig> LoadPathcompConfig(const std::string& path) {
  auto reader = config::ConfigReader::OpenFile(path);
  if (!reader.ok()) return reader.status();
  PathcompConfig config;
  config.replica_id = reader->RequiredId("replica_id");
  config.listen_address = reader->RequiredString("listen");
  if (!config.listen_address.empty() && !config::IsValidHostPort(config.listen_address)) {
    reader->AddError("listen", "expected host:port with a port from 0 to 65535");
  }
  config.listen_address_file = reader->OptionalPath("listen_address_file", "");
  config.state_dir = reader->RequiredPath("state_dir");
  config.backup_dir = reader->OptionalPath("backup_dir", config.state_dir + "/checkpoints");
  config.topology_path = reader->RequiredPath("topology");
  config.solve_debounce =
      std::chrono::milliseconds(reader->OptionalUint("solve_debounce_ms", 50, 0, 10'000));
  config.chain_headroom = reader->OptionalDouble("chain_headroom", 0.1, 0, 0.9);
  for (auto& entry : reader->OptionalMapList("elephant_objectives")) {
    const auto priority = static_cast<uint32_t>(entry.RequiredUint("priority", 0, 1'000'000));
    const std::string objective = entry.RequiredString("objective");
    McfObjective parsed = McfObjective::kMinMaxUtilization;
    if (objective == "total-flow") {
      parsed = McfObjective::kMaxFairThroughput;
    } else if (objective != "mlu" && !objective.empty()) {
      entry.AddError("objective", "expected mlu or total-flow, got \"" + objective + "\"");
    }
    if (!config.elephant_objectives.emplace(priority, parsed).second) {
      entry.AddError("priority", "priority " + std::to_string(priority) + " is listed twice");
    }
    entry.RejectUnknownKeys();
  }
  if (auto straggler = reader->OptionalMap("straggler")) {
    StragglerRules& rules = config.straggler;
    rules.report_max_age_ms = static_cast<int64_t>(straggler->OptionalUint("report_max_age_s", 60, 1, 3600)) * 1000;
    rules.min_deviation_us = straggler->OptionalUint("min_deviation_us", rules.min_deviation_us, 0, 10'000'000);
    rules.min_deviation_ratio = straggler->OptionalDouble("min_deviation_ratio", rules.min_deviation_ratio, 0, 10);
    straggler->RejectUnknownKeys();
  }
  if (auto replication = reader->OptionalMap("replication")) {
    ReplicationConfig& replicated = config.replication.emplace();
    replicated.etcd_endpoints = replication->OptionalStringList("etcd");
    if (replicated.etcd_endpoints.empty()) replication->AddError("etcd", "needs at least one etcd member host:port");
    for (const std::string& endpoint : replicated.etcd_endpoints) {
      if (!config::IsValidHostPort(endpoint)) replication->AddError("etcd", "\"" + endpoint + "\" is not host:port");
    }
    replicated.election = replication->OptionalString("election", replicated.election);
    if (replicated.election.empty()) replication->AddError("election", "must not be empty");
    replicated.lease_ttl = std::chrono::seconds(replication->OptionalUint("lease_ttl_s", 5, 2, 60));
    if (replication->Has("tls")) replicated.tls = config::ReadTlsKeys(*replication);
    replication->RejectUnknownKeys();
  }
  config.tls = config::ReadTlsKeys(*reader);
  config.health_listen = config::ReadHealthListen(*reader);
  config.metrics = config::ReadMetricsListen(*reader, config.tls);
  reader->RejectUnknownKeys();
  if (auto status = reader->status(); !status.ok()) return status;
  return config;
}

}  // namespace geodesic::pathcomp
