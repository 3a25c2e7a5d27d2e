#pragma once
// pathcomp's configuration (one YAML file), validated once at load.
//
//   replica_id: pc1                  # this replica's id; must match its certificate
//   listen: 127.0.0.1:7443           # host:port; port 0 picks a free port
//   listen_address_file: run/pc1.addr  # optional: written with host:port once listening
//   state_dir: /var/lib/geodesic/pc1   # RocksDB lives here
//   backup_dir: /var/lib/geodesic/pc1/checkpoints  # optional (this default): where `tectl backup`'s
//                                    # checkpoints are made while they stream; keep it on the state
//                                    # dir's file system (hard links); emptied after each backup
//   topology: backbone.yaml          # the inventory: project YAML/JSON, REPETITA .graph, GraphML
//   solve_debounce_ms: 50            # optional, 0..10000
//   chain_headroom: 0.1              # optional, 0..0.9: share of chain links kept from elephant flows
//   telemetry:                       # optional: ingest of the site agents' reports (README "Telemetry durability")
//     measurement_flush_ms: 100      #   1..10000: link measurements (RTT, jitter, loss, utilization) are
//                                    #   acknowledged once in memory and written, the latest per link,
//                                    #   this often, unsynced; state changes are synced before their ack
//   journal:                         # optional: how much of the store's journal is kept (every
//     max_age_hours: 168             #   change and its cause; pathcomp/model/journal_retention.h):
//     max_mb: 4096                   #   1..87600 hours and 1..1048576 MB, the defaults shown; the
//     check_interval_s: 60           #   older entries go (never the newest), checked this often (1..3600)
//   elephant_objectives:             # optional, per priority class (the rest: elephant_default):
//     - {priority: 0, objective: mlu}         # route all, minimize max link utilization
//     - {priority: 1, objective: total-flow}  # carry the most that fits, fairly
//     - {priority: 2, objective: latency,     # route all on the shortest paths that keep every link
//        utilization_target: 0.8,            #   within max(utilization_target (0.01..10),
//        mlu_slack: 0.01}                    #   (1 + mlu_slack (0..10)) x the class's optimal MLU)
//     - {priority: 3, objective: latency,     # protected (mlu and latency classes): after any single
//        protection: links,                  #   failure of a fiber (links), SRLG (srlgs) or facility
//        protection_limit: 1.0}              #   (facilities), on the plan's backups, no link above
//                                            #   protection_limit (0.01..10) x capacity (default none)
//   elephant_default: {objective: mlu}  # optional: the same keys, for every class not listed
//   plan_threads: 2                  # optional, 1..64: threads a plan's routes are built on (one more
//                                    #   writes the chains meanwhile); default: the machine's cores, at
//                                    #   most 8. The plan is the same whatever the number
//   protection_budget_ms: 30000      # optional, 100..3600000: how long one plan's rounds of failure
//                                    #   limits may take (from the first); past it the plan is published
//                                    #   unprotected, the class's protection_problem saying so (plan_builder.h)
//   straggler:                       # optional: planned vs measured per chain hop (docs/stragglers.md)
//     report_max_age_s: 60           #   1..3600: older service latency reports are not used
//     min_deviation_us: 1000         #   0..10000000: the noise floor, absolute ...
//     min_deviation_ratio: 0.1       #   0..10: ... and relative to the planned value (the larger counts)
//   gray_failures:                   # optional: how links are judged (pathcomp/health/link_judge.h);
//     slow_factor: 1.5               # the defaults shown. slow: RTT over baseline x factor,
//     slow_floor_ms: 2               #   and over baseline + floor, and over baseline + N MADs
//     slow_mad_multiplier: 5
//     lossy_ratio: 0.02              # lossy: loss at or over this
//     flap_changes: 4                # flapping: this many state changes within the window
//     flap_window_s: 600
//     min_bad_paths: 2               # bad end-to-end paths needed to blame a link they share
//     path_max_age_s: 60
//     baseline_minutes: 60           # the baseline's window, of per-minute medians
//     baseline_min_minutes: 5        # minutes needed before anything is judged slow
//   auto_drain:                      # optional: pathcomp drains confirmed gray links by itself
//     enabled: true                  # (pathcomp/health/auto_drain_policy.h); the defaults shown
//     hold_s: 30                     # confirmed slow/lossy/flapping this long before a drain
//     undrain_hold_s: 300            # healthy this long before the drain is undone
//     max_active: 2                  # fibers (a link and its reverse) drained automatically at once
//     max_per_hour: 4
//     fail_open_links: 3             # more fibers than this turning bad within the window: drain nothing
//     fail_open_window_s: 60
//     retry_refused_s: 300           # a drain the pre-check refused is tried again after this
//     utilization_limit: 1.0         # the pre-check's, as `tectl drain --utilization-limit`
//   tls: {ca: ca.crt, cert: pathcomp-pc1.crt, key: pathcomp-pc1.key}
//   health: {listen: 127.0.0.1:7480}  # optional: GET /healthz, /readyz (daemon/admin_server.h)
//   metrics: {listen: 127.0.0.1:9480}  # optional: the admin listener: /metrics, /healthz, /readyz
//                                    # and the console at / (config/shared_keys.h: tls, address_file)
//   replication:                     # optional; without it the replica runs standalone
//     etcd: [127.0.0.1:2379, 127.0.0.1:22379, 127.0.0.1:32379]
//     election: geodesic/pathcomp/leader   # optional
//     lease_ttl_s: 5                 # optional, 2..60: a dead leader is replaced within this
//     tls: {ca: ca.crt, cert: pathcomp-pc1.crt, key: pathcomp-pc1.key}  # optional: etcd over mTLS;
//                                    # members show spiffe://geodesic/etcd/<m> (make-pki.sh --etcd)
#include <chrono>
#include <map>
#include <optional>
#include <vector>
#include <string>

#include "absl/status/statusor.h"
#include "daemon/admin_server.h"
#include "pathcomp/solver/chain_stragglers.h"
#include "pathcomp/health/auto_drain_policy.h"
#include "pathcomp/health/link_judge.h"
#include "pathcomp/model/journal_retention.h"
#include "pathcomp/solver/mcf_problem.h"
#include "pathcomp/solver/plan_builder.h"
#include "tls/credentials.h"

namespace geodesic::pathcomp {

struct ReplicationConfig {
  std::vector<std::string> etcd_endpoints;
  std::string election = "geodesic/pathcomp/leader";
  std::chrono::seconds lease_ttl{5};
  std::optional<tls::TlsFiles> tls;  // client certificate to etcd; nullopt: plaintext
};

struct PathcompConfig {
  std::string replica_id;
  std::string listen_address;
  std::string listen_address_file;  // empty: none
  std::string state_dir;
  std::string backup_dir;  // default: <state_dir>/checkpoints
  std::string topology_path;
  std::chrono::milliseconds solve_debounce{50};
  double chain_headroom = 0.1;
  std::chrono::milliseconds measurement_flush{100};  // telemetry.measurement_flush_ms
  JournalRetention journal_retention;  // journal.max_age_hours, .max_mb, .check_interval_s
  McfClassPolicies elephant_policies;  // elephant_objectives, elephant_default
  int plan_threads = DefaultBuildThreads();
  std::chrono::milliseconds protection_budget = kDefaultProtectionBudget;
  StragglerRules straggler;
  health::VerdictThresholds gray_failures;
  health::AutoDrainOptions auto_drain;
  tls::TlsFiles tls;
  std::string health_listen;  // empty: no health endpoint
  std::optional<daemon::AdminServerOptions> metrics;  // nullopt: no admin listener
  std::optional<ReplicationConfig> replication;  // nullopt: standalone
};

// Errors name the file and key; every problem is listed.
[[nodiscard]] absl::StatusOr<PathcompConfig> LoadPathcompConfig(const std::string& path);

}  // namespace geodesic::pathcomp
