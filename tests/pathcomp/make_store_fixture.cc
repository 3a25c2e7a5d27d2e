// make_store_fixture TOPOLOGY OUT_DIR: writes the upgrade test's fixture, a
// backup (state/backup) of a small store written by this build's schema, the
// way pathcomp writes one. Run it once per schema version (see
// tests/data/README.md and kSchemaVersion in state/rocks_migration.h):
//
//   build/bin/make_store_fixture deploy/examples/backbone.yaml tests/data/store-v2
//
// What it holds is what store_upgrade_test checks in every fixture, whatever
// its version; change both together:
//   - the topology's inventory (facilities, nodes, links, fabrics, services,
//     workloads), imported once,
//   - workload "fixture-elephant" (chi -> 10.6.0.0/16, 25 Gbps, priority 2),
//   - intents "fixture-drain" (drain link iad-chi) and "fixture-override"
//     (metric 40 on link nyc-iad, no expiry), by spiffe://geodesic/operator/fixture,
//   - every facility's agent ("agent", incarnation 7) reporting all its links
//     up (link health, agent sessions),
//   - epoch 1 and one plan (generation 1) computed on all that,
//   - two audit records ("fixture one", "fixture two"),
//   - the journal of all of it.
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "metrics/metrics_registry.h"
#include "pathcomp/model/model.h"
#include "pathcomp/service/event_bus.h"
#include "pathcomp/service/planner.h"
#include "geodesic/v1/telemetry.pb.h"
#include "state/backup/backup_dir.h"
#include "state/rocks_store.h"
#include "topology/import.h"

namespace geodesic {
namespace {

constexpr char kOperator[] = "spiffe://geodesic/operator/fixture";
constexpr uint64_t kIncarnation = 7;
constexpr int64_t kCreatedAtMs = 1'767'225'600'000;  // 2026-01-01: fixed, so a regenerated fixture differs less

absl::Status Fill(pathcomp::Model& model, const std::string& topology_path) {
  auto inventory = topology::ImportTopology(topology_path);
  if (!inventory.ok()) return inventory.status();
  if (auto imported = model.ImportInventory(*inventory, "fixture: import of the topology"); !imported.ok()) {
    return imported.status();
  }
  v1::Workload workload;
  workload.set_id("fixture-elephant");
  workload.mutable_elephant()->set_src_facility_id("chi");
  workload.mutable_elephant()->set_dst_prefix("10.6.0.0/16");
  workload.mutable_elephant()->set_demand_gbps(25);
  workload.mutable_elephant()->set_priority(2);
  if (auto added = model.AddWorkload(workload, kOperator); !added.ok()) return added;
  v1::Intent drain;
  drain.set_id("fixture-drain");
  drain.mutable_drain()->mutable_target()->set_link_id("iad-chi");
  drain.set_reason("fiber work");
  if (auto added = model.AddIntent(drain, kOperator, kCreatedAtMs); !added.ok()) return added;
  v1::Intent override_intent;
  override_intent.set_id("fixture-override");
  override_intent.mutable_metric_override()->set_link_id("nyc-iad");
  override_intent.mutable_metric_override()->set_igp_metric(40);
  if (auto added = model.AddIntent(override_intent, kOperator, kCreatedAtMs); !added.ok()) return added;
  auto epoch = model.NextEpoch();
  if (!epoch.ok()) return epoch.status();

  // Every agent reports its links up (a snapshot and its sync marker), so the plan has routes.
  for (const v1::Facility& facility : model.Facilities()) {
    if (auto session = model.OpenSession(facility.id(), "agent", kIncarnation); !session.ok()) return session.status();
    v1::AgentMessage snapshot;
    snapshot.mutable_snapshot()->set_seq(1);
    for (const v1::Link& link : model.Links()) {
      if (link.src_facility_id() != facility.id()) continue;
      v1::LinkReport* report = snapshot.mutable_snapshot()->add_links();
      report->set_link_id(link.id());
      report->mutable_health()->set_state(v1::OPER_STATE_UP);
      report->mutable_health()->set_rtt_us(2 * link.latency_us());
      report->mutable_health()->set_measured_at_unix_ms(kCreatedAtMs);
    }
    v1::AgentMessage sync;
    sync.mutable_sync()->set_seq(2);
    for (const v1::AgentMessage* message : {&snapshot, &sync}) {
      auto applied = model.ApplyReport(facility.id(), "agent", kIncarnation, *message,
                                       absl::StrCat("spiffe://geodesic/site/", facility.id(), "/agent"));
      if (!applied.ok()) return applied.status();
    }
  }
  pathcomp::EventBus events;
  pathcomp::PlannerConfig config;
  config.replica_id = "fixture";
  config.epoch = *epoch;
  metrics::Registry registry("pathcomp", {});  // the fixture's solve is counted nowhere
  pathcomp::SolveMetrics solves(registry);
  pathcomp::Planner planner(model, events, config, solves);
  if (auto generation = planner.SolveNow(pathcomp::SolveCause::kStartup, "fixture plan"); !generation.ok()) {
    return generation.status();
  }
  for (const char* action : {"fixture one", "fixture two"}) {
    v1::AuditRecord record;
    record.set_at_unix_ms(kCreatedAtMs);
    record.set_identity(kOperator);
    record.set_role("admin");
    record.set_action(action);
    record.set_ok(true);
    record.set_result("OK");
    if (auto appended = model.AppendAudit(record); !appended.ok()) return appended.status();
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_store_fixture TOPOLOGY OUT_DIR\n");
    return 2;
  }
  std::string scratch = (std::filesystem::temp_directory_path() / "geodesic-fixture-XXXXXX").string();
  if (mkdtemp(scratch.data()) == nullptr) {
    std::fprintf(stderr, "make_store_fixture: cannot make a temporary directory\n");
    return 1;
  }
  const std::string store_dir = scratch + "/store";
  absl::Status status;
  {
    auto store = state::OpenRocksStore(store_dir);
    auto model = store.ok() ? pathcomp::Model::Open(*std::move(store))
                            : absl::StatusOr<std::unique_ptr<pathcomp::Model>>(store.status());
    status = model.ok() ? Fill(**model, argv[1]) : model.status();
  }
  absl::StatusOr<v1::BackupManifest> manifest = absl::InternalError("unset");
  if (!status.ok()) manifest = status;
  if (status.ok()) {
    auto store = state::OpenRocksStore(store_dir);
    v1::BackupManifest origin;
    origin.set_pathcomp_replica("fixture");
    origin.set_requested_by("make_store_fixture");
    origin.set_created_at_unix_ms(kCreatedAtMs);
    manifest = store.ok() ? state::backup::BackupLocalStore(**store, argv[2], origin)
                          : absl::StatusOr<v1::BackupManifest>(store.status());
  }
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
  if (!manifest.ok()) {
    std::fprintf(stderr, "make_store_fixture: %s\n", std::string(manifest.status().message()).c_str());
    return 1;
  }
  uint64_t bytes = 0;
  for (const v1::BackupFile& file : manifest->files()) bytes += file.size_bytes();
  std::printf("wrote %s: schema %u, journal seq %llu, %d files, %llu bytes\n", argv[2], manifest->schema_version(),
              static_cast<unsigned long long>(manifest->last_journal_seq()), manifest->files_size(),
              static_cast<unsigned long long>(bytes));
  return 0;
}

}  // namespace
}  // namespace geodesic

int main(int argc, char** argv) { return geodesic::Main(argc, argv); }
