#include "pathcomp/model/model.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "daemon/log.h"
#include "pathcomp/model/entity_key.h"
#include "pathcomp/model/entity_rules.h"
#include "pathcomp/model/journal_page.h"

namespace geodesic::pathcomp {
namespace {

using state::Kind;

constexpr std::string_view kEpochId = "epoch";

template <typename T>
absl::Status LoadAll(const state::Store& store, Kind kind, std::map<std::string, T>& into) {
  auto items = state::List<T>(store, kind);
  if (!items.ok()) return items.status();
  for (auto& item : *items) {
    std::string id = EntityKeyOf(item);
    into.emplace(std::move(id), std::move(item));
  }
  return absl::OkStatus();
}

}  // namespace

Model::Model(state::StorePtr store) : store_(std::move(store)), plans_(*store_), audit_log_(*store_) {}

Model::~Model() {
  if (auto flushed = FlushMeasurements(/*sync=*/true); !flushed.ok()) {
    daemon::LogError("measurements not written at shutdown", {{"error", flushed.status().ToString()}});
  }
}

absl::StatusOr<std::unique_ptr<Model>> Model::Open(state::StorePtr store) {
  std::unique_ptr<Model> model(new Model(std::move(store)));
  if (auto status = model->Load(); !status.ok()) return status;
  return model;
}

absl::Status Model::Load() {
  std::lock_guard lock(mu_);
  if (auto s = LoadAll(*store_, Kind::kFacility, entities_.facilities); !s.ok()) return s;
  if (auto s = LoadAll(*store_, Kind::kNode, entities_.nodes); !s.ok()) return s;
  if (auto s = LoadAll(*store_, Kind::kLink, entities_.links); !s.ok()) return s;
  // Telemetry writes a link's health apart from its inventory record.
  auto health = store_->ListRaw(Kind::kLinkHealth);
  if (!health.ok()) return health.status();
  IndexLinksLocked();
  for (const auto& [id, bytes] : *health) {
    v1::Link* link = FindLinkLocked(id);
    if (link == nullptr) continue;
    if (!link->mutable_health()->ParseFromString(bytes)) {
      return absl::DataLossError(absl::StrCat("link_health/", id, " does not parse"));
    }
  }
  if (auto s = LoadAll(*store_, Kind::kFabric, entities_.fabrics); !s.ok()) return s;
  if (auto s = LoadAll(*store_, Kind::kService, entities_.services); !s.ok()) return s;
  if (auto s = LoadAll(*store_, Kind::kWorkload, entities_.workloads); !s.ok()) return s;
  if (auto s = LoadAll(*store_, Kind::kIntent, entities_.intents); !s.ok()) return s;
  auto sessions = state::List<v1::AgentSession>(*store_, Kind::kAgentSession);
  if (!sessions.ok()) return sessions.status();
  for (auto& session : *sessions) {
    sessions_[SessionKey(session.facility_id(), session.agent_id())] = session;
  }
  if (auto s = plans_.Load(); !s.ok()) return s;
  if (auto s = audit_log_.Load(); !s.ok()) return s;
  revision_ = store_->LastJournalSeq();
  return absl::OkStatus();
}

ModelView Model::View() const {
  std::lock_guard lock(mu_);
  return entities_.View();
}

uint64_t Model::Revision() const {
  std::lock_guard lock(mu_);
  return revision_;
}

void Model::IndexLinksLocked() {
  link_index_.clear();
  link_index_.reserve(entities_.links.size());
  for (auto& [id, link] : entities_.links) link_index_.emplace(id, &link);
}

std::shared_ptr<const Snapshot> Model::CurrentSnapshot(uint64_t* revision) {
  std::lock_guard lock(mu_);
  if (revision != nullptr) *revision = revision_;
  if (snapshot_ && !pending_health_.empty()) {
    std::vector<std::pair<std::string, v1::LinkHealth>> health;
    health.reserve(pending_health_.size());
    for (const v1::Link* link : pending_health_) health.emplace_back(link->id(), link->health());
    auto updated = snapshot_->WithLinkHealth(health);
    // Every pending link is in entities_ (the model validated it) and so in the
    // snapshot; should that ever not hold, a rebuild is the safe answer.
    snapshot_ = updated.ok() ? std::make_shared<const Snapshot>(*std::move(updated)) : nullptr;
  }
  pending_health_.clear();
  if (!snapshot_) {
    snapshot_ = std::make_shared<const Snapshot>(Snapshot::Build(entities_.View()));
  }
  return snapshot_;
}

namespace {
template <typename T>
std::vector<T> Values(std::mutex& mu, const std::map<std::string, T>& items) {
  std::lock_guard lock(mu);
  return Entities::Values(items);
}
}  // namespace

std::vector<v1::Facility> Model::Facilities() const { return Values(mu_, entities_.facilities); }
std::vector<v1::Node> Model::Nodes() const { return Values(mu_, entities_.nodes); }
std::vector<v1::Link> Model::Links() const { return Values(mu_, entities_.links); }
std::vector<v1::Fabric> Model::Fabrics() const { return Values(mu_, entities_.fabrics); }
std::vector<v1::Service> Model::Services() const { return Values(mu_, entities_.services); }
std::vector<v1::Workload> Model::Workloads() const { return Values(mu_, entities_.workloads); }
std::vector<v1::Intent> Model::Intents() const { return Values(mu_, entities_.intents); }

namespace {
template <typename T>
std::optional<T> Find(std::mutex& mu, const std::map<std::string, T>& items, const std::string& id) {
  std::lock_guard lock(mu);
  auto it = items.find(id);
  return it == items.end() ? std::nullopt : std::optional<T>(it->second);
}
}  // namespace

std::optional<v1::Workload> Model::FindWorkload(const std::string& id) const {
  return Find(mu_, entities_.workloads, id);
}
std::optional<v1::Intent> Model::FindIntent(const std::string& id) const { return Find(mu_, entities_.intents, id); }

absl::StatusOr<v1::AgentSession> Model::OpenSession(const std::string& facility_id,
                                                    const std::string& agent_id,
                                                    uint64_t incarnation) {
  std::lock_guard order(write_order_mu_);
  std::unique_lock lock(mu_);
  if (!entities_.facilities.count(facility_id)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown facility ", facility_id));
  }
  const std::string key = SessionKey(facility_id, agent_id);
  auto it = sessions_.find(key);
  if (it != sessions_.end() && it->second.incarnation() == incarnation) {
    v1::AgentSession session = it->second;
    // The session as answered must be what the store holds: its measurements
    // not yet written go first.
    if (auto written = WriteUnwrittenLocked(key); !written.ok()) return written.status();
    lock.unlock();
    // The agent forgets what this session says is applied: it must be
    // durable, and the last telemetry group may still be syncing.
    if (absl::Status synced = store_->Sync(); !synced.ok()) return synced;
    return session;
  }
  v1::AgentSession session;
  session.set_facility_id(facility_id);
  session.set_agent_id(agent_id);
  session.set_incarnation(incarnation);
  state::ChangeSet changes(
      absl::StrCat("agent ", key, " started incarnation ", incarnation));
  changes.Put(Kind::kAgentSession, key, session);
  if (auto committed = store_->Commit(changes); !committed.ok()) return committed.status();
  sessions_[key] = session;
  // The new incarnation starts with a snapshot of every link: what the old
  // one measured and did not get written is superseded.
  unwritten_.erase(key);
  return session;
}

absl::Status Model::CheckIntent(const v1::Intent& intent) const {
  std::lock_guard lock(mu_);
  return CheckNewIntent(entities_, intent);
}

absl::Status Model::AddIntent(v1::Intent intent, const std::string& actor, int64_t now_unix_ms) {
  std::lock_guard lock(mu_);
  if (auto status = CheckNewIntent(entities_, intent); !status.ok()) return status;
  intent.set_created_by(actor);
  intent.set_created_at_unix_ms(now_unix_ms);
  state::ChangeSet changes(absl::StrCat("intent ", intent.id(), " added by ", actor));
  changes.Put(Kind::kIntent, intent.id(), intent);
  if (auto committed = store_->Commit(changes); !committed.ok()) return committed.status();
  entities_.intents[intent.id()] = std::move(intent);
  InvalidateSnapshot();
  return absl::OkStatus();
}

std::vector<std::string> Model::ExpiredIntents(int64_t now_unix_ms) const {
  std::lock_guard lock(mu_);
  return pathcomp::ExpiredIntents(entities_, now_unix_ms);
}

absl::Status Model::DeleteIntent(const std::string& id, const std::string& actor) {
  std::lock_guard lock(mu_);
  if (!entities_.intents.count(id)) return absl::NotFoundError(absl::StrCat("unknown intent ", id));
  state::ChangeSet changes(absl::StrCat("intent ", id, " removed by ", actor));
  changes.Delete(Kind::kIntent, id);
  if (auto committed = store_->Commit(changes); !committed.ok()) return committed.status();
  entities_.intents.erase(id);
  InvalidateSnapshot();
  return absl::OkStatus();
}

absl::Status Model::AddWorkload(const v1::Workload& workload, const std::string& actor) {
  std::lock_guard lock(mu_);
  if (auto status = CheckWorkload(entities_, workload); !status.ok()) return status;
  if (entities_.workloads.count(workload.id())) {
    return absl::AlreadyExistsError(absl::StrCat("workload ", workload.id(), " already exists"));
  }
  state::ChangeSet changes(absl::StrCat("workload ", workload.id(), " added by ", actor));
  changes.Put(Kind::kWorkload, workload.id(), workload);
  if (auto committed = store_->Commit(changes); !committed.ok()) return committed.status();
  entities_.workloads[workload.id()] = workload;
  InvalidateSnapshot();
  return absl::OkStatus();
}

absl::Status Model::DeleteWorkload(const std::string& id, const std::string& actor) {
  std::lock_guard lock(mu_);
  if (!entities_.workloads.count(id)) return absl::NotFoundError(absl::StrCat("unknown workload ", id));
  if (auto pinned_by = PinningIntent(entities_, id)) {
    return absl::FailedPreconditionError(absl::StrCat("workload ", id, " is pinned by intent ", *pinned_by,
                                                      ": unpin it first"));
  }
  state::ChangeSet changes(absl::StrCat("workload ", id, " removed by ", actor));
  changes.Delete(Kind::kWorkload, id);
  if (auto committed = store_->Commit(changes); !committed.ok()) return committed.status();
  entities_.workloads.erase(id);
  InvalidateSnapshot();
  return absl::OkStatus();
}

std::vector<std::pair<std::string, absl::Status>> Model::MirrorWorkloads(const std::vector<v1::Workload>& put,
                                                                          const std::vector<std::string>& remove,
                                                                          const std::string& cause) {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, absl::Status>> refused;
  std::vector<std::string> removed;
  std::vector<const v1::Workload*> stored;
  state::ChangeSet changes(cause);
  for (const std::string& id : remove) {
    if (!entities_.workloads.count(id)) continue;
    if (auto pinned_by = PinningIntent(entities_, id)) {
      refused.emplace_back(id, absl::FailedPreconditionError(absl::StrCat("pinned by intent ", *pinned_by)));
      continue;
    }
    changes.Delete(Kind::kWorkload, id);
    removed.push_back(id);
  }
  for (const v1::Workload& workload : put) {
    if (absl::Status status = CheckWorkload(entities_, workload); !status.ok()) {
      refused.emplace_back(workload.id(), std::move(status));
      continue;
    }
    changes.Put(Kind::kWorkload, workload.id(), workload);
    stored.push_back(&workload);
  }
  if (changes.empty()) return refused;
  if (auto committed = store_->Commit(changes); !committed.ok()) {
    refused.clear();
    for (const std::string& id : removed) refused.emplace_back(id, committed.status());
    for (const v1::Workload* workload : stored) refused.emplace_back(workload->id(), committed.status());
    return refused;
  }
  for (const std::string& id : removed) entities_.workloads.erase(id);
  for (const v1::Workload* workload : stored) entities_.workloads[workload->id()] = *workload;
  InvalidateSnapshot();
  return refused;
}

std::shared_ptr<const v1::Plan> Model::CurrentPlan() const { return plans_.Current(); }

absl::Status Model::CommitPlan(std::shared_ptr<const v1::Plan> plan) { return plans_.Commit(std::move(plan)); }

std::vector<v1::PlanSummary> Model::PlanHistory(size_t limit) const { return plans_.Summaries(limit); }

absl::StatusOr<v1::Plan> Model::PlanAt(uint64_t generation) const { return plans_.At(generation); }

absl::StatusOr<uint64_t> Model::AppendAudit(v1::AuditRecord record) { return audit_log_.Append(std::move(record)); }

absl::StatusOr<v1::ListAuditLogResponse> Model::AuditLog(const v1::ListAuditLogRequest& request) const {
  return audit_log_.List(request);
}

absl::StatusOr<uint64_t> Model::NextEpoch() {
  std::lock_guard lock(mu_);
  uint64_t epoch = 1;
  auto stored = store_->GetRaw(Kind::kMeta, kEpochId);
  if (stored.ok()) {
    uint64_t previous = 0;
    if (!absl::SimpleAtoi(*stored, &previous)) {
      return absl::DataLossError(absl::StrCat("stored epoch \"", *stored, "\" is not a number"));
    }
    epoch = previous + 1;
  } else if (!absl::IsNotFound(stored.status())) {
    return stored.status();
  }
  state::ChangeSet changes(absl::StrCat("standalone start, epoch ", epoch));
  changes.PutRaw(Kind::kMeta, kEpochId, std::to_string(epoch));
  if (auto committed = store_->Commit(changes); !committed.ok()) return committed.status();
  return epoch;
}

uint64_t Model::LastJournalSeq() const { return store_->LastJournalSeq(); }

Model::JournalSpan Model::KeptJournal() const {
  JournalSpan span{.first_seq = store_->FirstJournalSeq(), .last_seq = store_->LastJournalSeq()};
  span.bytes = store_->JournalBytes(span.first_seq, span.last_seq);
  return span;
}

absl::StatusOr<uint64_t> Model::TrimJournal(const JournalRetention& retention, int64_t now_unix_ms) {
  return ApplyJournalRetention(*store_, retention, now_unix_ms);
}

absl::StatusOr<v1::ListJournalResponse> Model::Journal(const v1::ListJournalRequest& request) const {
  return JournalPage(*store_, request);
}

}  // namespace geodesic::pathcomp

namespace geodesic::pathcomp {

absl::Status Model::StoreBaselines(const std::vector<v1::RttBaseline>& baselines) {
  if (baselines.empty()) return absl::OkStatus();
  state::ChangeSet changes(absl::StrCat("rtt baselines of ", baselines.size(), " links"));
  for (const v1::RttBaseline& baseline : baselines) changes.Put(Kind::kLinkBaseline, baseline.link_id(), baseline);
  return store_->CommitUnsynced(changes).status();
}

absl::StatusOr<std::vector<v1::RttBaseline>> Model::StoredBaselines() const {
  return state::List<v1::RttBaseline>(*store_, Kind::kLinkBaseline);
}

}  // namespace geodesic::pathcomp
