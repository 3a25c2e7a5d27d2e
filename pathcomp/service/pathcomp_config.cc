#include "pathcomp/service/pathcomp_config.h"

#include "config/config_reader.h"
#include "config/shared_keys.h"
#include "pathcomp/solver/class_policy_config.h"

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
  if (auto telemetry = reader->OptionalMap("telemetry")) {
    config.measurement_flush = std::chrono::milliseconds(
        telemetry->OptionalUint("measurement_flush_ms", config.measurement_flush.count(), 1, 10'000));
    telemetry->RejectUnknownKeys();
  }
  if (auto journal = reader->OptionalMap("journal")) {
    JournalRetention& retention = config.journal_retention;
    retention.max_age =
        std::chrono::hours(journal->OptionalUint("max_age_hours", retention.max_age.count(), 1, 87'600));
    retention.max_bytes = journal->OptionalUint("max_mb", retention.max_bytes >> 20, 1, 1'048'576) << 20;
    retention.check_interval =
        std::chrono::seconds(journal->OptionalUint("check_interval_s", retention.check_interval.count(), 1, 3600));
    journal->RejectUnknownKeys();
  }
  ReadClassPolicies(*reader, config.elephant_policies);
  config.plan_threads = static_cast<int>(reader->OptionalUint("plan_threads", config.plan_threads, 1, 64));
  config.protection_budget = std::chrono::milliseconds(
      reader->OptionalUint("protection_budget_ms", config.protection_budget.count(), 100, 3'600'000));
  if (auto straggler = reader->OptionalMap("straggler")) {
    StragglerRules& rules = config.straggler;
    rules.report_max_age_ms = static_cast<int64_t>(straggler->OptionalUint("report_max_age_s", 60, 1, 3600)) * 1000;
    rules.min_deviation_us = straggler->OptionalUint("min_deviation_us", rules.min_deviation_us, 0, 10'000'000);
    rules.min_deviation_ratio = straggler->OptionalDouble("min_deviation_ratio", rules.min_deviation_ratio, 0, 10);
    straggler->RejectUnknownKeys();
  }
  if (auto gray = reader->OptionalMap("gray_failures")) {
    health::VerdictThresholds& t = config.gray_failures;
    t.slow_factor = gray->OptionalDouble("slow_factor", t.slow_factor, 1, 100);
    t.slow_floor_us = static_cast<uint64_t>(gray->OptionalDouble("slow_floor_ms", t.slow_floor_us / 1000.0, 0, 10'000) * 1000);
    t.slow_mad_multiplier = gray->OptionalDouble("slow_mad_multiplier", t.slow_mad_multiplier, 0, 100);
    t.lossy_ratio = gray->OptionalDouble("lossy_ratio", t.lossy_ratio, 0.0001, 1);
    t.flap_changes = static_cast<uint32_t>(gray->OptionalUint("flap_changes", t.flap_changes, 2, 1000));
    t.flap_window_ms = static_cast<int64_t>(gray->OptionalUint("flap_window_s", t.flap_window_ms / 1000, 1, 86'400)) * 1000;
    t.min_bad_paths = static_cast<uint32_t>(gray->OptionalUint("min_bad_paths", t.min_bad_paths, 2, 1000));
    t.path_max_age_ms = static_cast<int64_t>(gray->OptionalUint("path_max_age_s", t.path_max_age_ms / 1000, 1, 3600)) * 1000;
    t.baseline.window_minutes =
        static_cast<uint32_t>(gray->OptionalUint("baseline_minutes", t.baseline.window_minutes, 2, 1440));
    t.baseline.min_minutes =
        static_cast<uint32_t>(gray->OptionalUint("baseline_min_minutes", t.baseline.min_minutes, 1, 1440));
    if (auto valid = health::ValidateThresholds(t); !valid.ok()) gray->AddError("baseline_min_minutes", std::string(valid.message()));
    gray->RejectUnknownKeys();
  }
  if (auto drain = reader->OptionalMap("auto_drain")) {
    health::AutoDrainOptions& o = config.auto_drain;
    o.enabled = drain->OptionalBool("enabled", o.enabled);
    o.hold_ms = static_cast<int64_t>(drain->OptionalUint("hold_s", o.hold_ms / 1000, 0, 86'400)) * 1000;
    o.undrain_hold_ms = static_cast<int64_t>(drain->OptionalUint("undrain_hold_s", o.undrain_hold_ms / 1000, 0, 604'800)) * 1000;
    o.max_active = static_cast<uint32_t>(drain->OptionalUint("max_active", o.max_active, 0, 1000));
    o.max_per_hour = static_cast<uint32_t>(drain->OptionalUint("max_per_hour", o.max_per_hour, 0, 10'000));
    o.fail_open_links = static_cast<uint32_t>(drain->OptionalUint("fail_open_links", o.fail_open_links, 0, 100'000));
    o.fail_open_window_ms =
        static_cast<int64_t>(drain->OptionalUint("fail_open_window_s", o.fail_open_window_ms / 1000, 1, 86'400)) * 1000;
    o.retry_refused_ms =
        static_cast<int64_t>(drain->OptionalUint("retry_refused_s", o.retry_refused_ms / 1000, 1, 86'400)) * 1000;
    o.utilization_limit = drain->OptionalDouble("utilization_limit", o.utilization_limit, 0.01, 10);
    drain->RejectUnknownKeys();
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
