#include "pathcomp/model/model.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "entity/entity_id.h"
#include "pathcomp/model/entity_key.h"

namespace geodesic::pathcomp {
namespace {

using state::Kind;

constexpr std::string_view kEpochId = "epoch";

bool SameMessage(const google::protobuf::MessageLite& a, const google::protobuf::MessageLite& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

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

absl::StatusOr<std::unique_ptr<Model>> Model::Open(state::StorePtr store) {
  std::unique_ptr<Model> model(new Model(std::move(store)));
  if (auto status = model->Load(); !status.ok()) return status;
  return model;
}

absl::Status Model::Load() {
  std::lock_guard lock(mu_);
  if (auto s = LoadAll(*store_, Kind::kFacility, facilities_); !s.ok()) return s;
  if (auto s = LoadAll(*store_, Kind::kNode, nodes_); !s.ok()) return s;
  if (auto s = LoadAll(*store_, Kind::kLink, links_); !s.ok()) return s;
  // Telemetry writes a link's health apart from its inventory record.
  auto health = store_->ListRaw(Kind::kLinkHealth);
  if (!health.ok()) return health.status();
  for (const auto& [id, bytes] : *health) {
    auto link = links_.find(id);
    if (link == links_.end()) continue;
    if (!link->second.mutable_health()->ParseFromString(bytes)) {
      return absl::DataLossError(absl::StrCat("link_health/", id, " does not parse"));
    }
  }
  if (auto s = LoadAll(*store_, Kind::kFabric, fabrics_); !s.ok()) return s;
  if (auto s = LoadAll(*store_, Kind::kService, services_); !s.ok()) return s;
  if (auto s = LoadAll(*store_, Kind::kWorkload, workloads_); !s.ok()) return s;
  if (auto s = LoadAll(*store_, Kind::kIntent, intents_); !s.ok()) return s;
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
  return ViewLocked();
}

ModelView Model::ViewLocked() const {
  ModelView view;
  view.facilities.reserve(facilities_.size());
  for (const auto& [id, facility] : facilities_) view.facilities.push_back(facility);
  view.nodes.reserve(nodes_.size());
  for (const auto& [id, node] : nodes_) view.nodes.push_back(node);
  view.links.reserve(links_.size());
  for (const auto& [id, link] : links_) view.links.push_back(link);
  for (const auto& [id, intent] : intents_) view.intents.push_back(intent);
  view.workloads.reserve(workloads_.size());
  for (const auto& [id, workload] : workloads_) view.workloads.push_back(workload);
  for (const auto& [id, service] : services_) view.services.push_back(service);
  for (const auto& [id, fabric] : fabrics_) view.fabrics.push_back(fabric);
  return view;
}

uint64_t Model::Revision() const {
  std::lock_guard lock(mu_);
  return revision_;
}

std::shared_ptr<const Snapshot> Model::CurrentSnapshot(uint64_t* revision) {
  std::lock_guard lock(mu_);
  if (revision != nullptr) *revision = revision_;
  if (snapshot_ && !pending_health_.empty()) {
    std::vector<std::pair<std::string, v1::LinkHealth>> health(pending_health_.begin(),
                                                               pending_health_.end());
    auto updated = snapshot_->WithLinkHealth(health);
    // Every pending link is in links_ (the model validated it) and so in the
    // snapshot; should that ever not hold, a rebuild is the safe answer.
    snapshot_ = updated.ok() ? std::make_shared<const Snapshot>(*std::move(updated)) : nullptr;
  }
  pending_health_.clear();
  if (!snapshot_) {
    snapshot_ = std::make_shared<const Snapshot>(Snapshot::Build(ViewLocked()));
  }
  return snapshot_;
}

namespace {
template <typename T>
std::vector<T> Values(std::mutex& mu, const std::map<std::string, T>& items) {
  std::lock_guard lock(mu);
  std::vector<T> values;
  values.reserve(items.size());
  for (const auto& [id, item] : items) values.push_back(item);
  return values;
}
}  // namespace

std::vector<v1::Facility> Model::Facilities() const { return Values(mu_, facilities_); }
std::vector<v1::Node> Model::Nodes() const { return Values(mu_, nodes_); }
std::vector<v1::Link> Model::Links() const { return Values(mu_, links_); }
std::vector<v1::Fabric> Model::Fabrics() const { return Values(mu_, fabrics_); }
std::vector<v1::Service> Model::Services() const { return Values(mu_, services_); }
std::vector<v1::Workload> Model::Workloads() const { return Values(mu_, workloads_); }
std::vector<v1::Intent> Model::Intents() const { return Values(mu_, intents_); }

absl::StatusOr<v1::AgentSession> Model::OpenSession(const std::string& facility_id,
                                                    const std::string& agent_id,
                                                    uint64_t incarnation) {
  std::unique_lock lock(mu_);
  if (!facilities_.count(facility_id)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown facility ", facility_id));
  }
  const std::string key = SessionKey(facility_id, agent_id);
  auto it = sessions_.find(key);
  if (it != sessions_.end() && it->second.incarnation() == incarnation) {
    v1::AgentSession session = it->second;
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
  return session;
}

absl::Status Model::ValidateIntentTarget(const v1::Intent& intent) const {
  if (intent.has_metric_override()) {
    const v1::MetricOverride& override = intent.metric_override();
    if (!links_.count(override.link_id())) return absl::NotFoundError(absl::StrCat("unknown link ", override.link_id()));
    if (override.igp_metric() < 1 || override.igp_metric() > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("a metric is 1..65535, not ", override.igp_metric()));
    }
    if (override.expires_at_unix_ms() < 0) return absl::InvalidArgumentError("expires_at_unix_ms is negative");
    return absl::OkStatus();
  }
  if (intent.has_pin()) return ValidatePin(intent.pin());
  if (!intent.has_drain()) return absl::InvalidArgumentError("the intent names no action");
  const auto& target = intent.drain().target();
  switch (target.kind_case()) {
    case v1::Target::kLinkId:
      if (!links_.count(target.link_id())) {
        return absl::NotFoundError(absl::StrCat("unknown link ", target.link_id()));
      }
      break;
    case v1::Target::kNodeId:
      if (!nodes_.count(target.node_id())) {
        return absl::NotFoundError(absl::StrCat("unknown node ", target.node_id()));
      }
      break;
    case v1::Target::kFacilityId:
      if (!facilities_.count(target.facility_id())) {
        return absl::NotFoundError(absl::StrCat("unknown facility ", target.facility_id()));
      }
      break;
    case v1::Target::KIND_NOT_SET:
      return absl::InvalidArgumentError("the drain names no target");
  }
  if (intent.drain().plane_set()) {
    if (target.kind_case() != v1::Target::kFacilityId) {
      return absl::InvalidArgumentError("a plane drain names a facility (whose fabric has the plane)");
    }
    auto fabric = fabrics_.find(target.facility_id());
    if (fabric == fabrics_.end()) {
      return absl::NotFoundError(absl::StrCat("facility ", target.facility_id(), " has no fabric in the model"));
    }
    if (intent.drain().plane() >= fabric->second.planes()) {
      return absl::InvalidArgumentError(absl::StrCat("the fabric of ", target.facility_id(), " has ",
                                                     fabric->second.planes(), " planes; there is no plane ",
                                                     intent.drain().plane()));
    }
  }
  return absl::OkStatus();
}

absl::Status Model::ValidatePin(const v1::Pin& pin) const {
  auto workload = workloads_.find(pin.workload_id());
  if (workload == workloads_.end()) return absl::NotFoundError(absl::StrCat("unknown workload ", pin.workload_id()));
  if (!workload->second.has_chain()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workload ", pin.workload_id(),
        " is an elephant flow: it follows per-destination routes that every flow to its prefix shares, so a pin "
        "cannot hold it alone on a path; only agent chains can be pinned (drain links or facilities instead)"));
  }
  const v1::AgentChain& chain = workload->second.chain();
  if (pin.path_facility_ids().empty() == pin.allowed_facility_ids().empty()) {
    return absl::InvalidArgumentError("a pin gives a path or a facility set (one of them)");
  }
  if (!pin.path_facility_ids().empty()) {
    if (pin.path_facility_ids_size() != chain.service_ids_size()) {
      return absl::InvalidArgumentError(absl::StrCat("chain ", pin.workload_id(), " makes ", chain.service_ids_size(),
                                                     " calls; a path pin names one replica facility per call, not ",
                                                     pin.path_facility_ids_size()));
    }
    for (int call = 0; call < chain.service_ids_size(); ++call) {
      const std::string& facility = pin.path_facility_ids(call);
      auto service = services_.find(chain.service_ids(call));
      const bool hosted = service != services_.end() &&
                          std::find(service->second.replica_facility_ids().begin(),
                                    service->second.replica_facility_ids().end(),
                                    facility) != service->second.replica_facility_ids().end();
      if (!hosted) {
        return absl::InvalidArgumentError(absl::StrCat("call ", call + 1, " (service ", chain.service_ids(call),
                                                       ") has no replica in ", facility));
      }
    }
  }
  for (const std::string& facility : pin.allowed_facility_ids()) {
    if (!facilities_.count(facility)) return absl::NotFoundError(absl::StrCat("unknown facility ", facility));
  }
  return absl::OkStatus();
}

absl::Status Model::CheckIntent(const v1::Intent& intent) const {
  std::lock_guard lock(mu_);
  return CheckIntentLocked(intent);
}

absl::Status Model::CheckIntentLocked(const v1::Intent& intent) const {
  if (!entity::IsValidEntityId(intent.id())) {
    return absl::InvalidArgumentError(
        absl::StrCat("intent id \"", intent.id(), "\" is not valid (", entity::kEntityIdRule, ")"));
  }
  if (intents_.count(intent.id())) {
    return absl::AlreadyExistsError(absl::StrCat("intent ", intent.id(), " already exists"));
  }
  if (auto status = ValidateIntentTarget(intent); !status.ok()) return status;
  for (const auto& [id, existing] : intents_) {
    if (intent.has_drain() && existing.has_drain() && SameMessage(existing.drain(), intent.drain())) {
      return absl::AlreadyExistsError(absl::StrCat("already drained by intent ", id));
    }
    if (intent.has_pin() && existing.has_pin() && existing.pin().workload_id() == intent.pin().workload_id()) {
      return absl::AlreadyExistsError(absl::StrCat("workload ", intent.pin().workload_id(), " is already pinned by intent ", id));
    }
    if (intent.has_metric_override() && existing.has_metric_override() &&
        existing.metric_override().link_id() == intent.metric_override().link_id()) {
      return absl::AlreadyExistsError(absl::StrCat("link ", intent.metric_override().link_id(),
                                                   " already has a metric override: intent ", id));
    }
  }
  if (intent.reason().size() > 1024) return absl::InvalidArgumentError("reason longer than 1024");
  return absl::OkStatus();
}

absl::Status Model::AddIntent(v1::Intent intent, const std::string& actor, int64_t now_unix_ms) {
  std::lock_guard lock(mu_);
  if (auto status = CheckIntentLocked(intent); !status.ok()) return status;
  intent.set_created_by(actor);
  intent.set_created_at_unix_ms(now_unix_ms);
  state::ChangeSet changes(absl::StrCat("intent ", intent.id(), " added by ", actor));
  changes.Put(Kind::kIntent, intent.id(), intent);
  if (auto committed = store_->Commit(changes); !committed.ok()) return committed.status();
  intents_[intent.id()] = std::move(intent);
  InvalidateSnapshot();
  return absl::OkStatus();
}

std::vector<std::string> Model::ExpiredIntents(int64_t now_unix_ms) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> expired;
  for (const auto& [id, intent] : intents_) {
    if (intent.has_metric_override() && intent.metric_override().expires_at_unix_ms() != 0 &&
        intent.metric_override().expires_at_unix_ms() <= now_unix_ms) {
      expired.push_back(id);
    }
  }
  return expired;
}

absl::Status Model::DeleteIntent(const std::string& id, const std::string& actor) {
  std::lock_guard lock(mu_);
  if (!intents_.count(id)) return absl::NotFoundError(absl::StrCat("unknown intent ", id));
  state::ChangeSet changes(absl::StrCat("intent ", id, " removed by ", actor));
  changes.Delete(Kind::kIntent, id);
  if (auto committed = store_->Commit(changes); !committed.ok()) return committed.status();
  intents_.erase(id);
  InvalidateSnapshot();
  return absl::OkStatus();
}

absl::Status Model::ValidateWorkload(const v1::Workload& workload) const {
  if (!entity::IsValidEntityId(workload.id())) {
    return absl::InvalidArgumentError(absl::StrCat("workload id \"", workload.id(),
                                                   "\" is not valid (", entity::kEntityIdRule, ")"));
  }
  if (workload.has_elephant()) {
    const auto& flow = workload.elephant();
    if (!facilities_.count(flow.src_facility_id())) {
      return absl::NotFoundError(absl::StrCat("unknown facility ", flow.src_facility_id()));
    }
    if (!topology::IsValidPrefix(flow.dst_prefix())) {
      return absl::InvalidArgumentError(
          absl::StrCat("dst_prefix \"", flow.dst_prefix(), "\" is not a CIDR prefix"));
    }
    if (!std::isfinite(flow.demand_gbps()) || flow.demand_gbps() <= 0) {
      return absl::InvalidArgumentError("demand_gbps must be positive");
    }
    return absl::OkStatus();
  }
  if (workload.has_chain()) {
    const auto& chain = workload.chain();
    if (!facilities_.count(chain.origin_facility_id())) {
      return absl::NotFoundError(absl::StrCat("unknown facility ", chain.origin_facility_id()));
    }
    if (chain.service_ids().empty()) return absl::InvalidArgumentError("a chain calls services");
    for (const auto& service : chain.service_ids()) {
      if (!services_.count(service)) {
        return absl::NotFoundError(absl::StrCat("unknown service ", service));
      }
    }
    if (chain.latency_budget_us() == 0) {
      return absl::InvalidArgumentError("latency_budget_us must be positive");
    }
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError("a workload is an elephant flow or an agent chain");
}

absl::Status Model::AddWorkload(const v1::Workload& workload, const std::string& actor) {
  std::lock_guard lock(mu_);
  if (auto status = ValidateWorkload(workload); !status.ok()) return status;
  if (workloads_.count(workload.id())) {
    return absl::AlreadyExistsError(absl::StrCat("workload ", workload.id(), " already exists"));
  }
  state::ChangeSet changes(absl::StrCat("workload ", workload.id(), " added by ", actor));
  changes.Put(Kind::kWorkload, workload.id(), workload);
  if (auto committed = store_->Commit(changes); !committed.ok()) return committed.status();
  workloads_[workload.id()] = workload;
  InvalidateSnapshot();
  return absl::OkStatus();
}

absl::Status Model::DeleteWorkload(const std::string& id, const std::string& actor) {
  std::lock_guard lock(mu_);
  if (!workloads_.count(id)) return absl::NotFoundError(absl::StrCat("unknown workload ", id));
  for (const auto& [intent_id, intent] : intents_) {
    if (intent.has_pin() && intent.pin().workload_id() == id) {
      return absl::FailedPreconditionError(
          absl::StrCat("workload ", id, " is pinned by intent ", intent_id, ": unpin it first"));
    }
  }
  state::ChangeSet changes(absl::StrCat("workload ", id, " removed by ", actor));
  changes.Delete(Kind::kWorkload, id);
  if (auto committed = store_->Commit(changes); !committed.ok()) return committed.status();
  workloads_.erase(id);
  InvalidateSnapshot();
  return absl::OkStatus();
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

absl::StatusOr<v1::ListJournalResponse> Model::Journal(const v1::ListJournalRequest& request) const {
  constexpr uint32_t kDefaultLimit = 100;
  constexpr uint32_t kMaxLimit = 10'000;
  const uint32_t limit = request.limit() == 0 ? kDefaultLimit : request.limit();
  if (limit > kMaxLimit) {
    return absl::InvalidArgumentError(absl::StrCat("limit must be at most ", kMaxLimit));
  }
  const uint64_t last = store_->LastJournalSeq();
  const uint64_t from =
      request.from_seq() != 0 ? request.from_seq() : (last > limit ? last - limit + 1 : 1);
  auto entries = store_->ReadJournal(from, limit);
  if (!entries.ok()) return entries.status();
  v1::ListJournalResponse response;
  response.set_last_seq(last);
  for (const auto& entry : *entries) {
    auto* record = response.add_entries();
    record->set_seq(entry.seq);
    record->set_at_unix_ms(entry.at_unix_ms);
    record->set_cause(entry.cause);
    for (const auto& change : entry.changes) {
      auto* out = record->add_changes();
      out->set_kind(std::string(state::KindName(change.kind)));
      out->set_id(change.id);
      out->set_deleted(!change.value.has_value());
    }
  }
  return response;
}

}  // namespace geodesic::pathcomp
