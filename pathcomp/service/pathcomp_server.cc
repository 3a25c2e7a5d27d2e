#include "pathcomp/service/pathcomp_server.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#include <map>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "daemon/clock.h"
#include "daemon/log.h"
#include "files/atomic_file.h"
#include "pathcomp/model/model.h"
#include "pathcomp/replication/etcd_audit_log.h"
#include "pathcomp/replication/etcd_mirror.h"
#include "pathcomp/replication/inventory_replica.h"
#include "pathcomp/replication/leader_election.h"
#include "pathcomp/service/auto_drainer.h"
#include "pathcomp/service/backup_service.h"
#include "pathcomp/service/event_bus.h"
#include "pathcomp/service/operator_service.h"
#include "pathcomp/service/pathcomp_metrics.h"
#include "pathcomp/service/pathcomp_metrics_binding.h"
#include "pathcomp/service/plan_service.h"
#include "pathcomp/service/planner.h"
#include "pathcomp/service/relay_service.h"
#include "pathcomp/service/telemetry_service.h"
#include "state/rocks_store.h"
#include "tls/credentials.h"
#include "topology/import.h"
#include "topology/inventory_proto.h"

namespace geodesic::pathcomp {
namespace {

// Large enough for any inventory an operator imports (Cogentco with its
// 38,612 demands is ~2 MB on the wire).
constexpr int kMaxOperatorMessageBytes = 256 << 20;

class PathcompServerImpl final : public PathcompServer {
 public:
  // `store` is the store `model` owns (for backups).
  PathcompServerImpl(std::unique_ptr<Model> model, const state::Store& store, const std::string& backup_dir,
                     const std::string& replica_id, PlannerConfig planner_config,
                     std::optional<ReplicationConfig> replication, const health::VerdictThresholds& gray_failures,
                     const health::AutoDrainOptions& auto_drain, metrics::Registry& registry,
                     StragglerRules stragglers, std::chrono::milliseconds measurement_flush,
                     JournalRetention journal_retention)
      : journal_retention_(journal_retention),
        replication_(std::move(replication)),
        model_(std::move(model)),
        metrics_(registry),
        planner_(*model_, events_, WithLeadership(planner_config), metrics_.solves()),  // a copy: read below
        telemetry_(*model_, planner_, events_, planner_config.replica_id, metrics_.telemetry(), measurement_flush),
        plans_(*model_, planner_),
        operators_(*model_, planner_, events_,
                   [this](const std::vector<std::string>& facilities) {
                     telemetry_.Resync(facilities);
                   },
                   [this] { return MayMutate(); },
                   ReplicationHooksFor(), stragglers),
        auto_drainer_(*model_, events_, gray_failures, auto_drain, AutoDrainActions(replica_id), metrics_.auto_drain()),
        backups_(store, *model_, backup_dir, replica_id,
                 [this](v1::AuditRecord record) { RecordAudit(std::move(record)); }),
        relay_(*model_, planner_, events_),
        metrics_binding_(std::make_unique<PathcompMetricsBinding>(
            metrics_.scraped(), MetricSources(planner_config.epoch))) {
    operators_.AttachAutoDrainer(&auto_drainer_);
    telemetry_.SetObserver(
        [this](const std::string& facility_id, const v1::AgentMessage& message, int64_t now_unix_ms) {
          auto_drainer_.Observe(facility_id, message, now_unix_ms);
        });
  }

  // The automatic drainer acts through the Operator API's own code, as this replica.
  AutoDrainer::Actions AutoDrainActions(const std::string& replica_id) {
    tls::Identity controller;
    controller.kind = tls::Identity::Kind::kPathcomp;
    controller.name = replica_id;
    controller.spiffe_id = "spiffe://geodesic/pathcomp/" + replica_id;
    return {.drain = [this, controller](const health::DrainOrder& order, double utilization_limit) {
              return operators_.TakeAutomaticDrain(controller, order, utilization_limit);
            },
            .undrain = [this, controller](const health::UndrainOrder& order) {
              return operators_.UndoAutomaticDrain(controller, order);
            },
            .may_act = [this] { return MayMutate(); },
            .paths = [this] { return operators_.ChainPathEvidence(); }};
  }

  // The judge's links and the baselines stored before a restart.
  absl::Status LoadAutoDrainer() { return auto_drainer_.Load(); }

  // What the scraped metrics read: this server's parts. Standalone, its plans
  // always go to routerd with `standalone_epoch`; replicated, while it leads.
  PathcompMetricSources MetricSources(uint64_t standalone_epoch) {
    if (!replication_) {
      return {.model = *model_,
              .planner = planner_,
              .telemetry = telemetry_,
              .delivering_epoch = [standalone_epoch] { return std::optional<uint64_t>(standalone_epoch); },
              .etcd_reachable = {}};
    }
    return {.model = *model_,
            .planner = planner_,
            .telemetry = telemetry_,
            .delivering_epoch = [this] { return LeadingEpoch(); },
            .etcd_reachable = [this] {
              const LeaderElection* election = election_ptr_.load();
              return election != nullptr && election->LeaseAlive();
            }};
  }

  // A record of a call outside the Operator API (a backup): into etcd's one
  // history while this replica leads, else into its own store's log.
  void RecordAudit(v1::AuditRecord record) {
    absl::StatusOr<uint64_t> stored = absl::UnavailableError("not stored");
    if (replication_ && MayMutate().ok()) {
      const LeaderElection* election = election_ptr_.load();
      auto key = election == nullptr ? std::nullopt : election->leader_key();
      if (key) stored = audit_->Append(*key, record);
    }
    if (!stored.ok()) stored = model_->AppendAudit(std::move(record));
    if (!stored.ok()) daemon::LogError("audit record not stored", {{"error", stored.status().ToString()}});
  }

  // Replicated: connects to etcd (nothing blocks on it) so the planner can ask
  // whether this replica leads; Campaign starts once the address is known.
  absl::Status PrepareReplication() {
    if (!replication_) return absl::OkStatus();
    // mTLS with the replica's own certificate; the members must show an
    // etcd identity of the project's CA (no host names to match).
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    if (replication_->tls) {
      if (auto status = tls::ValidateTlsFiles(*replication_->tls); !status.ok()) return status;
      credentials = tls::MakeChannelCredentials(*replication_->tls, tls::Identity::Kind::kEtcd);
    }
    auto etcd = EtcdClient::Create({.endpoints = replication_->etcd_endpoints, .credentials = credentials,
                                    .call_timeout = std::chrono::milliseconds(2000)});
    if (!etcd.ok()) return etcd.status();
    etcd_ = *std::move(etcd);
    // What operators decided comes from etcd, on every replica.
    // An intent or workload from etcd may be what an inventory release the
    // model refused was waiting for (see InventoryReplica).
    auto replan = [this](SolveCause cause) {
      return [this, cause](std::string reason) {
        if (inventory_) inventory_->RetryPending();
        planner_.RequestSolve(cause, std::move(reason));
      };
    };
    intents_ = std::make_unique<EtcdMirror>(*etcd_, "geodesic/intents/", IntentsInModel(),
                                            replan(SolveCause::kIntent));
    workloads_ = std::make_unique<EtcdMirror>(*etcd_, "geodesic/workloads/", WorkloadsInModel(),
                                              replan(SolveCause::kWorkload));
    inventory_ = std::make_unique<InventoryReplica>(
        *etcd_, "geodesic/inventory", "geodesic/workloads/",
        [this](const InventoryReleaseContent& release) { return ApplyRelease(release); });
    audit_ = std::make_unique<EtcdAuditLog>(*etcd_, "geodesic/audit/", Model::kAuditLogDepth);
    intents_->Start();
    workloads_->Start();
    return absl::OkStatus();
  }

  // The inventory at start. Standalone: the configured file, unless it is the
  // one applied last (ApplyConfiguredInventory). Replicated: etcd's release
  // when there is one (the file seeds only an empty cluster); the file when
  // etcd holds none; the store's when etcd cannot be reached and the store
  // has an inventory (the release is applied once etcd answers).
  absl::Status LoadInventory(const topology::Topology& file, const std::string& path) {
    if (inventory_) {
      auto release = inventory_->Fetch();
      if (release.ok() && release->has_value()) {
        daemon::LogInfo("inventory from etcd; the configured file seeds only an empty cluster",
                        {{"version", std::to_string((*release)->header.version())}, {"topology", path}});
        // Refused for now (an intent still names what it removes): the watch retries.
        if (absl::Status synced = inventory_->SyncNow(); !synced.ok()) {
          daemon::LogWarn("inventory release not applied at start; retrying", {{"error", synced.ToString()}});
        }
        return absl::OkStatus();
      }
      if (!release.ok()) {
        daemon::LogWarn("cannot read the inventory from etcd at start", {{"error", release.status().ToString()}});
        if (!model_->Facilities().empty()) return absl::OkStatus();
      }
    }
    auto imported = model_->ApplyConfiguredInventory(file, path);
    if (!imported.ok()) return imported.status();
    if (!imported->has_value()) {
      daemon::LogInfo("inventory file unchanged since it was last applied; the store stands", {{"topology", path}});
    }
    return absl::OkStatus();
  }

  // A release from etcd into this replica's model, with the workloads etcd
  // held at the same revision (they replace the model's, so none is left
  // naming what the release removed; the workloads' mirror goes on from
  // there). Intents are kept: the leader refuses an import that would leave
  // one dangling.
  absl::Status ApplyRelease(const InventoryReleaseContent& release) {
    const std::string source = absl::StrCat("inventory release ", release.header.version(), " from etcd");
    auto topology = topology::TopologyFromInventoryProto(release.inventory, source);
    if (!topology.ok()) return topology.status();
    ImportOptions options;
    options.replace_workloads = release.with_workloads;
    auto imported =
        model_->ImportInventory(*topology, absl::StrCat(source, " (", release.header.cause(), ")"), options);
    if (!imported.ok()) return imported.status();
    if (!imported->resync_facilities.empty()) telemetry_.Resync(imported->resync_facilities);
    if (imported->changed()) {
      // Entries refused while the inventory lacked what they name get another chance.
      for (EtcdMirror* mirror : {intents_.get(), workloads_.get()}) mirror->Resync();
      planner_.RequestSolve(SolveCause::kInventory, source);
    }
    return absl::OkStatus();
  }

  // The model's inventory as a release holds it: no measurements, no workloads.
  v1::Inventory ModelInventory() const {
    v1::Inventory inventory;
    for (auto& facility : model_->Facilities()) *inventory.add_facilities() = std::move(facility);
    for (auto& node : model_->Nodes()) *inventory.add_nodes() = std::move(node);
    for (auto& link : model_->Links()) {
      link.clear_health();
      *inventory.add_links() = std::move(link);
    }
    for (auto& fabric : model_->Fabrics()) {
      fabric.clear_plane_health();
      *inventory.add_fabrics() = std::move(fabric);
    }
    for (auto& service : model_->Services()) *inventory.add_services() = std::move(service);
    return inventory;
  }

  // After LoadInventory: every later release is applied as it comes.
  void StartInventoryWatch() {
    if (inventory_) inventory_->Start();
  }

  void StartElection(const std::string& replica_id) {
    if (!etcd_) return;
    election_ = std::make_unique<LeaderElection>(
        *etcd_,
        ElectionOptions{.election = replication_->election, .candidate = replica_id + " " + address_,
                        .lease_ttl = replication_->lease_ttl},
        [this, replica_id](std::optional<uint64_t> epoch) {
          if (!epoch) return;
          // The first leader ever puts what its model holds into etcd.
          if (auto key = election_ptr_.load()->leader_key()) {
            // Workloads before the inventory: a release is applied with etcd's
            // workloads once they are seeded.
            for (EtcdMirror* mirror : {intents_.get(), workloads_.get()}) {
              if (auto status = mirror->SeedIfFirst(*key); !status.ok()) {
                daemon::LogError("cannot seed etcd", {{"error", status.ToString()}});
              }
            }
            if (auto status = inventory_->SeedIfFirst(*key, ModelInventory(),
                                                      "seeded from replica " + replica_id + "'s inventory");
                !status.ok()) {
              daemon::LogError("cannot seed etcd with the inventory", {{"error", status.ToString()}});
            }
          }
          // A new leader plans on the newest inventory, not on what its watch has seen so far.
          if (auto status = inventory_->SyncNow(); !status.ok()) {
            daemon::LogError("cannot read the inventory from etcd on election", {{"error", status.ToString()}});
          }
          planner_.RequestSolve(SolveCause::kLeader, "elected leader, epoch " + std::to_string(*epoch));
        });
    election_ptr_ = election_.get();
    election_->Start();
  }

  OperatorService::ReplicationHooks ReplicationHooksFor() {
    if (!replication_) return {};
    auto leader = [this]() -> absl::StatusOr<LeaderKey> {
      const LeaderElection* election = election_ptr_.load();
      auto key = election == nullptr ? std::nullopt : election->leader_key();
      if (!key || !election->LeadingEpoch()) return absl::FailedPreconditionError("not the leader any more");
      return *key;
    };
    return {.publish_intent = [this, leader](const v1::Intent& intent) -> absl::Status {
              auto key = leader();
              return key.ok() ? intents_->Publish(*key, intent.id(), intent.SerializeAsString()) : key.status();
            },
            .retract_intent = [this, leader](const std::string& id) -> absl::Status {
              auto key = leader();
              return key.ok() ? intents_->Retract(*key, id) : key.status();
            },
            .publish_workload = [this, leader](const v1::Workload& workload) -> absl::Status {
              auto key = leader();
              if (!key.ok()) return key.status();
              auto stored = model_->FindWorkload(workload.id());  // as the model holds it
              if (!stored) return absl::InternalError("the model lost workload " + workload.id());
              return workloads_->Publish(*key, stored->id(), stored->SerializeAsString());
            },
            .retract_workload = [this, leader](const std::string& id) -> absl::Status {
              auto key = leader();
              return key.ok() ? workloads_->Retract(*key, id) : key.status();
            },
            .publish_workload_changes = [this, leader](const std::vector<std::string>& changed,
                                                       const std::vector<std::string>& removed) -> absl::Status {
              auto key = leader();
              if (!key.ok()) return key.status();
              std::vector<std::pair<std::string, std::string>> entries;
              for (const std::string& id : changed) {
                auto stored = model_->FindWorkload(id);
                if (!stored) return absl::InternalError("the model lost workload " + id);
                entries.emplace_back(id, stored->SerializeAsString());
              }
              return workloads_->PublishAll(*key, entries, removed);
            },
            .resync = [this] {
              for (EtcdMirror* mirror : {intents_.get(), workloads_.get()}) {
                if (mirror != nullptr) mirror->Resync();
              }
              if (inventory_) inventory_->RetryPending();
            },
            .publish_inventory = [this, leader](const v1::Inventory& inventory, const std::string& cause,
                                                const std::function<absl::Status()>& apply_locally)
                -> absl::StatusOr<uint64_t> {
              auto key = leader();
              return key.ok() ? inventory_->Publish(*key, inventory, cause, apply_locally)
                              : absl::StatusOr<uint64_t>(key.status());
            },
            .append_audit = [this, leader](v1::AuditRecord record) -> absl::StatusOr<uint64_t> {
              auto key = leader();
              return key.ok() ? audit_->Append(*key, std::move(record)) : absl::StatusOr<uint64_t>(key.status());
            },
            .list_audit = [this](const v1::ListAuditLogRequest& request) { return audit_->List(request); }};
  }

  // The model as the etcd mirrors see it: intents and workloads by id.
  EtcdMirror::Model IntentsInModel() {
    return {.list = [this] {
              std::map<std::string, std::string> held;
              for (const v1::Intent& intent : model_->Intents()) held[intent.id()] = intent.SerializeAsString();
              return held;
            },
            .get = [this](const std::string& id) -> std::optional<std::string> {
              auto intent = model_->FindIntent(id);
              return intent ? std::optional<std::string>(intent->SerializeAsString()) : std::nullopt;
            },
            .apply = [this](const std::vector<std::string>& put, const std::vector<std::string>& remove) {
              // Few and each checked against the others: one at a time.
              EntryRefusals refused;
              for (const std::string& id : remove) {
                if (absl::Status status = model_->DeleteIntent(id, "etcd"); !status.ok() && !absl::IsNotFound(status)) {
                  refused.emplace_back(id, status);
                }
              }
              for (const std::string& bytes : put) {
                v1::Intent intent;
                if (!intent.ParseFromString(bytes)) continue;  // id_of refused it already
                if (model_->FindIntent(intent.id())) (void)model_->DeleteIntent(intent.id(), "etcd");  // replaced
                if (absl::Status status = model_->AddIntent(intent, intent.created_by(), intent.created_at_unix_ms());
                    !status.ok()) {
                  refused.emplace_back(intent.id(), status);
                }
              }
              return refused;
            },
            .id_of = [](const std::string& bytes) {
              v1::Intent intent;
              return intent.ParseFromString(bytes) ? intent.id() : std::string();
            }};
  }

  EtcdMirror::Model WorkloadsInModel() {
    return {.list = [this] {
              std::map<std::string, std::string> held;
              for (const v1::Workload& workload : model_->Workloads()) held[workload.id()] = workload.SerializeAsString();
              return held;
            },
            .get = [this](const std::string& id) -> std::optional<std::string> {
              auto workload = model_->FindWorkload(id);
              return workload ? std::optional<std::string>(workload->SerializeAsString()) : std::nullopt;
            },
            .apply = [this](const std::vector<std::string>& put, const std::vector<std::string>& remove) {
              // Many at once (an import's): one commit.
              std::vector<v1::Workload> workloads(put.size());
              for (size_t i = 0; i < put.size(); ++i) (void)workloads[i].ParseFromString(put[i]);
              return model_->MirrorWorkloads(workloads, remove,
                                             absl::StrCat(put.size(), " workloads put and ", remove.size(),
                                                          " removed (etcd)"));
            },
            .id_of = [](const std::string& bytes) {
              v1::Workload workload;
              return workload.ParseFromString(bytes) ? workload.id() : std::string();
            }};
  }

  PlannerConfig WithLeadership(PlannerConfig config) {
    if (replication_) config.leading_epoch = [this] { return LeadingEpoch(); };
    return config;
  }

  // For the planner: the epoch while leading (the election may not exist yet).
  std::optional<uint64_t> LeadingEpoch() const {
    const LeaderElection* election = election_ptr_.load();
    return election == nullptr ? std::nullopt : election->LeadingEpoch();
  }

  absl::Status MayMutate() const {
    if (!replication_) return absl::OkStatus();
    const LeaderElection* election = election_ptr_.load();
    if (election != nullptr && election->LeadingEpoch()) return absl::OkStatus();
    const std::string leader = election == nullptr ? "" : election->CurrentLeader();
    return absl::FailedPreconditionError(
        leader.empty() ? "this replica is a follower and no leader is elected (is etcd reachable?); try again"
                       : "this replica is a follower; send changes to the leader: " + leader);
  }

  ~PathcompServerImpl() override { Shutdown(); }

  absl::Status Listen(const PathcompConfig& config) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.SetMaxReceiveMessageSize(kMaxOperatorMessageBytes);
    builder.AddListeningPort(config.listen_address, tls::MakeServerCredentials(config.tls), &port);
    builder.RegisterService(&telemetry_);
    builder.RegisterService(&plans_);
    builder.RegisterService(&operators_);
    builder.RegisterService(&backups_);
    builder.RegisterService(&relay_);
    server_ = builder.BuildAndStart();
    if (!server_ || port == 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot listen on ", config.listen_address, " (in use or not local?)"));
    }
    address_ = absl::StrCat(config.listen_address.substr(0, config.listen_address.rfind(':')),
                            ":", port);
    planner_.Start();
    telemetry_.StartFlusher();
    expiry_ = std::thread([this] { ExpireIntentsUntilShutdown(); });
    return absl::OkStatus();
  }

  // Metric overrides end on their own: checked every second. The journal's
  // retention every journal.check_interval_s (from the first second: a store
  // that grew past it under an older build or config is trimmed at once).
  void ExpireIntentsUntilShutdown() {
    std::unique_lock lock(expiry_mu_);
    for (int tick = 0; !expiry_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_expiry_; }); ++tick) {
      lock.unlock();
      operators_.ExpireIntents(daemon::UnixNowMs());
      auto_drainer_.Tick(daemon::UnixNowMs());
      if (tick % journal_retention_.check_interval.count() == 0) TrimJournal();
      heartbeat_.Beat();
      lock.lock();
    }
  }

  void TrimJournal() {
    const uint64_t last = model_->LastJournalSeq();
    absl::StatusOr<uint64_t> dropped = model_->TrimJournal(journal_retention_, daemon::UnixNowMs());
    if (!dropped.ok()) {
      daemon::LogWarn("journal retention not applied; tried again in a minute",
                      {{"error", dropped.status().ToString()}});
    } else if (*dropped > 0) {
      daemon::LogInfo("journal trimmed to its retention",
                      {{"dropped_entries", absl::StrCat(*dropped)},
                       {"max_age_hours", absl::StrCat(journal_retention_.max_age.count())},
                       {"max_mb", absl::StrCat(journal_retention_.max_bytes >> 20)},
                       {"last_seq", absl::StrCat(last)}});
    }
  }

  Planner& planner() { return planner_; }
  std::string address() const override { return address_; }

  daemon::HealthChecks health_checks() override {
    return {.live = [this] { return heartbeat_.Check("intent expiry loop", std::chrono::seconds(30)); },
            .ready = [this] { return Readiness(); }};
  }

  State state() override { return {.model = *model_, .planner = planner_, .events = events_}; }

  daemon::HealthVerdict Readiness() const {
    if (!replication_) return {.ok = true, .reason = "standalone; model loaded"};
    if (auto epoch = LeadingEpoch()) return {.ok = true, .reason = "leader, epoch " + std::to_string(*epoch)};
    const LeaderElection* election = election_ptr_.load();
    const std::string leader = election == nullptr ? "" : election->CurrentLeader();
    if (leader.empty()) return {.ok = false, .reason = "no leader elected (is etcd reachable?)"};
    return {.ok = true, .reason = "following " + leader};
  }

  void Shutdown() override {
    if (shut_down_) return;
    shut_down_ = true;
    metrics_binding_.reset();  // scrapes no longer read what stops below
    // Resign first, so another replica takes over at once.
    {
      std::lock_guard lock(expiry_mu_);
      stop_expiry_ = true;
    }
    expiry_cv_.notify_all();
    if (expiry_.joinable()) expiry_.join();
    if (election_) election_->Stop();
    if (intents_) intents_->Stop();
    if (workloads_) workloads_->Stop();
    if (inventory_) inventory_->Stop();
    planner_.Stop();
    events_.Close();
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    telemetry_.StopFlusher();  // the streams have ended: write and sync the last measurements
  }

 private:
  const JournalRetention journal_retention_;
  const std::optional<ReplicationConfig> replication_;
  std::unique_ptr<EtcdClient> etcd_;
  std::unique_ptr<LeaderElection> election_;
  std::unique_ptr<EtcdMirror> intents_;
  std::unique_ptr<EtcdMirror> workloads_;
  std::unique_ptr<InventoryReplica> inventory_;
  std::unique_ptr<EtcdAuditLog> audit_;
  std::atomic<const LeaderElection*> election_ptr_{nullptr};
  std::unique_ptr<Model> model_;
  EventBus events_;
  PathcompMetrics metrics_;
  Planner planner_;
  TelemetryService telemetry_;
  PlanService plans_;
  OperatorService operators_;
  AutoDrainer auto_drainer_;
  BackupService backups_;
  RelayService relay_;
  std::unique_ptr<PathcompMetricsBinding> metrics_binding_;  // reset by Shutdown
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  bool shut_down_ = false;
  std::mutex expiry_mu_;
  std::condition_variable expiry_cv_;
  bool stop_expiry_ = false;
  std::thread expiry_;
  daemon::Heartbeat heartbeat_;  // beaten by expiry_
};

}  // namespace

absl::StatusOr<std::unique_ptr<PathcompServer>> PathcompServer::Start(const PathcompConfig& config,
                                                                       metrics::Registry& registry) {
  if (auto status = tls::ValidateTlsFiles(config.tls); !status.ok()) return status;
  auto own = tls::ReadCertificateIdentity(config.tls.cert_path);
  if (!own.ok()) return own.status();
  if (own->kind != tls::Identity::Kind::kPathcomp || own->name != config.replica_id) {
    return absl::InvalidArgumentError(
        absl::StrCat(config.tls.cert_path, ": certificate identity ", own->spiffe_id,
                     " is not spiffe://geodesic/pathcomp/", config.replica_id));
  }
  std::vector<std::string> skipped;
  auto inventory = topology::ImportTopology(config.topology_path, &skipped);  // any supported format
  if (!inventory.ok()) return inventory.status();
  for (const std::string& line : skipped) daemon::LogWarn("topology entry skipped", {{"what", line}});
  std::error_code error;
  std::filesystem::create_directories(config.state_dir, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat(config.state_dir, ": cannot create the state directory: ", error.message()));
  }
  state::RocksStoreOptions store_options;
  // Every Commit is synced; telemetry's measurements are written with
  // CommitUnsynced (Model::ApplyReport says which reports are which).
  store_options.sync_writes = true;
  auto store = state::OpenRocksStore(config.state_dir, store_options);
  if (!store.ok()) return store.status();
  const state::Store& store_ref = **store;  // owned by the model from here on
  auto model = Model::Open(*std::move(store));
  if (!model.ok()) return model.status();
  auto epoch = (*model)->NextEpoch();
  if (!epoch.ok()) return epoch.status();

  PlannerConfig planner_config;
  planner_config.replica_id = config.replica_id;
  planner_config.epoch = *epoch;
  planner_config.debounce = config.solve_debounce;
  planner_config.chain_headroom = config.chain_headroom;
  planner_config.elephant_policies = config.elephant_policies;
  planner_config.protection_budget = config.protection_budget;
  planner_config.threads = config.plan_threads;
  auto server = std::make_unique<PathcompServerImpl>(*std::move(model), store_ref, config.backup_dir,
                                                     config.replica_id, planner_config, config.replication,
                                                     config.gray_failures, config.auto_drain, registry,
                                                     config.straggler, config.measurement_flush,
                                                     config.journal_retention);
  if (auto status = server->PrepareReplication(); !status.ok()) return status;
  if (auto status = server->LoadInventory(*inventory, config.topology_path); !status.ok()) return status;
  server->StartInventoryWatch();
  if (auto status = server->LoadAutoDrainer(); !status.ok()) return status;
  if (auto generation = server->planner().SolveNow(SolveCause::kStartup, "pathcomp started"); !generation.ok()) {
    return generation.status();
  }
  if (auto status = server->Listen(config); !status.ok()) return status;
  server->StartElection(config.replica_id);
  if (!config.listen_address_file.empty()) {
    if (auto status = files::AtomicWriteFile(config.listen_address_file, server->address() + "\n");
        !status.ok()) {
      return status;
    }
  }
  daemon::LogInfo("pathcomp listening", {{"address", server->address()},
                                         {"replica", config.replica_id},
                                         {"epoch", config.replication ? "from the election" : std::to_string(*epoch)},
                                         {"state_dir", config.state_dir}});
  return server;
}

}  // namespace geodesic::pathcomp
