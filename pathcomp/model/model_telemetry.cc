// Model: applying the site agents' reports (see telemetry.proto), exactly
// once per agent incarnation, committed in groups.
#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <set>

#include "absl/strings/str_cat.h"
#include "daemon/log.h"
#include "entity/service_report_rules.h"
#include "fabric/fabric_validation.h"
#include "pathcomp/model/entity_key.h"
#include "pathcomp/model/model.h"

namespace geodesic::pathcomp {
namespace {

using state::Kind;

absl::Status ValidateHealth(const v1::LinkReport& report) {
  const auto& health = report.health();
  if (!v1::OperState_IsValid(health.state())) {
    return absl::InvalidArgumentError(absl::StrCat("link ", report.link_id(), ": unknown oper state ", health.state()));
  }
  if (!std::isfinite(health.loss_ratio()) || health.loss_ratio() < 0 || health.loss_ratio() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("link ", report.link_id(), ": loss_ratio must be within [0, 1]"));
  }
  if (!std::isfinite(health.utilization_ratio()) || health.utilization_ratio() < 0 ||
      health.utilization_ratio() > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat("link ", report.link_id(), ": utilization_ratio must be within [0, 100]"));
  }
  constexpr uint64_t kMaxRttUs = 10'000'000;  // 10 s: anything above is a broken clock
  if (health.rtt_us() > kMaxRttUs || health.jitter_us() > kMaxRttUs) {
    return absl::InvalidArgumentError(absl::StrCat("link ", report.link_id(), ": rtt_us/jitter_us above ", kMaxRttUs));
  }
  return absl::OkStatus();
}

// A delta of measurements only (DESIGN §3: perishable): no fabric plane, and
// every link it reports keeps the oper state the model holds. Snapshot batches
// and sync markers never are (the session's snapshot bookkeeping; a sync turns
// the links it did not report unknown).
bool IsMeasurementOnly(const v1::Update& delta, const std::vector<std::pair<v1::Link*, v1::LinkHealth>>& updated) {
  if (delta.planes_size() > 0) return false;
  return std::all_of(updated.begin(), updated.end(),
                     [](const auto& entry) { return entry.first->health().state() == entry.second.state(); });
}

bool SameRails(const v1::FabricPlaneHealth& a, const v1::FabricPlaneHealth& b) {
  return std::equal(a.failed_rails().begin(), a.failed_rails().end(), b.failed_rails().begin(),
                    b.failed_rails().end());
}

}  // namespace

struct Model::PendingReport {
  const std::string& facility_id;
  const std::string& agent_id;
  uint64_t incarnation;
  const v1::AgentMessage& message;
  const std::string& reporter;
  absl::StatusOr<ReportResult> result = absl::UnknownError("not applied");
  bool grouped = false;  // taken into a group by its leader
  bool done = false;     // its group committed (and synced)
  // Woken (under group_mu_) when its group committed, or to lead the next.
  std::condition_variable wake{};
};

// What one report changes, validated against the model, not yet applied.
struct Model::PreparedReport {
  uint64_t seq = 0;
  bool duplicate = false;
  std::string session_key;
  v1::AgentSession session;
  // The links it reports, as they are in entities_.links (stable while mu_ is held
  // from preparation to application), with their new health.
  std::vector<std::pair<v1::Link*, v1::LinkHealth>> updated;
  std::optional<v1::Fabric> fabric;
  std::vector<PlaneChange> plane_changes;
  // Service reports to keep (about a hop the model has), and why others are not.
  std::vector<const v1::ServiceLatencyReport*> service_reports;
  std::vector<std::string> service_reports_dropped;
};

std::vector<HopReport> Model::ServiceReports(const std::string& workload_id) const {
  std::lock_guard lock(mu_);
  return workload_id.empty() ? service_reports_.All() : service_reports_.ForChain(workload_id);
}

absl::Status Model::PrepareServiceReports(const std::string& facility_id, const v1::Update& update,
                                          PreparedReport& prepared) const {
  constexpr int kMaxServiceReportsPerUpdate = 100'000;
  if (update.service_reports_size() > kMaxServiceReportsPerUpdate) {
    return absl::InvalidArgumentError(
        absl::StrCat("too many service reports in one update (", update.service_reports_size(), ")"));
  }
  for (const v1::ServiceLatencyReport& report : update.service_reports()) {
    if (absl::Status valid = entity::ValidateServiceReportFields(report); !valid.ok()) return valid;
    if (report.received_at_unix_ms() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("service report (workload \"", report.workload_id(), "\", hop ",
                                                     report.hop(), "): received_at_unix_ms must be set by the agent"));
    }
  }
  for (const v1::ServiceLatencyReport& report : update.service_reports()) {
    if (absl::Status target = CheckServiceReportTarget(entities_, facility_id, report); !target.ok()) {
      prepared.service_reports_dropped.emplace_back(target.message());
    } else {
      prepared.service_reports.push_back(&report);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ReportResult> Model::ApplyReport(const std::string& facility_id, const std::string& agent_id,
                                                uint64_t incarnation, const v1::AgentMessage& message,
                                                const std::string& reporter) {
  PendingReport report{
      .facility_id = facility_id, .agent_id = agent_id, .incarnation = incarnation, .message = message, .reporter = reporter};
  if (message.has_delta()) {
    // Measurements only: applied at once, written by FlushMeasurements.
    std::lock_guard lock(mu_);
    absl::StatusOr<PreparedReport> prepared = PrepareReportLocked(report);
    if (!prepared.ok()) return prepared.status();
    if (!prepared->duplicate && IsMeasurementOnly(message.delta(), prepared->updated)) {
      UnwrittenMeasurements& unwritten = unwritten_[prepared->session_key];
      if (unwritten.first_seq == 0) unwritten.first_seq = prepared->seq;
      if (unwritten.reporter != reporter) unwritten.reporter = reporter;
      for (const auto& [link, health] : prepared->updated) unwritten.links.insert(link);
      ReportResult result = ApplyPreparedLocked(facility_id, *prepared);
      result.perishable = true;
      return result;
    }
    // A state change, or a duplicate (acknowledged once what it repeats is
    // stored): through the group commit below, which prepares it again.
  }
  std::unique_lock lock(group_mu_);
  group_queue_.push_back(&report);
  while (!report.done) {
    if (report.grouped || group_committing_) {
      report.wake.wait(lock);
      continue;
    }
    // Lead: commit everything waiting, this report included.
    group_committing_ = true;
    std::vector<PendingReport*> group;
    group.swap(group_queue_);
    for (PendingReport* member : group) member->grouped = true;
    lock.unlock();
    const bool answered_from_store = ApplyReportGroup(group);
    // The next group is written while this one syncs: the CPU work of one
    // overlaps the other's wait for the disk.
    lock.lock();
    group_committing_ = false;
    if (!group_queue_.empty()) group_queue_.front()->wake.notify_one();
    lock.unlock();
    if (answered_from_store) {
      if (absl::Status synced = store_->Sync(); !synced.ok()) {
        // What this group applied to the model is not durable, and the
        // sessions say otherwise: an agent would drop reports the store may
        // have lost. Only a restart from the store makes the two agree.
        daemon::LogError("the state store cannot make telemetry durable: exiting",
                         {{"error", std::string(synced.message())}});
        std::abort();
      }
    }
    lock.lock();
    // Only the members wake: with dozens of streams waiting, waking them all
    // on every commit cost more CPU than the commit. (A member cannot leave
    // before this lock is released.)
    for (PendingReport* member : group) {
      member->done = true;
      if (member != &report) member->wake.notify_one();
    }
  }
  return std::move(report.result);
}

bool Model::ApplyReportGroup(const std::vector<PendingReport*>& group) {
  std::lock_guard order(write_order_mu_);
  std::lock_guard lock(mu_);
  std::vector<std::optional<PreparedReport>> prepared(group.size());
  bool duplicates = false;
  bool any = false;
  for (size_t i = 0; i < group.size(); ++i) {
    absl::StatusOr<PreparedReport> report = PrepareReportLocked(*group[i]);
    if (!report.ok()) {
      group[i]->result = report.status();
    } else if (report->duplicate) {
      group[i]->result = ReportResult{.seq = report->seq, .duplicate = true};
      duplicates = true;
    } else {
      prepared[i] = *std::move(report);
      any = true;
    }
  }
  if (!any) return duplicates;  // acknowledged from an earlier group, maybe still syncing

  // One commit for the group; a later report of the same entity wins, as it
  // would have committed separately. Each session's measurements applied
  // before (not yet written) go first, so that the session stored with them
  // never claims a report the store does not hold.
  std::set<const v1::Link*> reported;
  for (const auto& report : prepared) {
    if (!report) continue;
    for (const auto& [link, health] : report->updated) reported.insert(link);
  }
  std::string cause;
  std::vector<std::string> flushed_sessions;
  for (size_t i = 0; i < group.size(); ++i) {
    if (!prepared[i]) continue;
    const std::string& key = prepared[i]->session_key;
    if (std::find(flushed_sessions.begin(), flushed_sessions.end(), key) == flushed_sessions.end()) {
      flushed_sessions.push_back(key);
      NameUnwrittenLocked(key, prepared[i]->seq, &cause);
    }
    if (!cause.empty()) cause += ", ";
    absl::StrAppend(&cause, "telemetry from ", group[i]->reporter, " seq ", prepared[i]->seq);
  }
  state::ChangeSet changes(std::move(cause));
  for (const std::string& key : flushed_sessions) PutUnwrittenLocked(key, /*with_session=*/false, reported, changes);
  std::map<v1::Link*, const v1::LinkHealth*> links;
  std::map<std::string, const v1::Fabric*> fabrics;
  std::map<std::string, const v1::AgentSession*> sessions;
  for (size_t i = 0; i < group.size(); ++i) {
    if (!prepared[i]) continue;
    for (const auto& [link, health] : prepared[i]->updated) links[link] = &health;
    if (prepared[i]->fabric) fabrics[group[i]->facility_id] = &*prepared[i]->fabric;
    sessions[prepared[i]->session_key] = &prepared[i]->session;
  }
  for (const auto& [link, health] : links) changes.Put(Kind::kLinkHealth, link->id(), *health);
  for (const auto& [id, fabric] : fabrics) changes.Put(Kind::kFabric, id, *fabric);
  for (const auto& [id, session] : sessions) changes.Put(Kind::kAgentSession, id, *session);
  if (auto committed = store_->CommitUnsynced(changes); !committed.ok()) {
    for (size_t i = 0; i < group.size(); ++i) {
      if (prepared[i]) group[i]->result = committed.status();
    }
    return duplicates;
  }
  for (const std::string& key : flushed_sessions) unwritten_.erase(key);

  for (size_t i = 0; i < group.size(); ++i) {
    if (!prepared[i]) continue;
    group[i]->result = ApplyPreparedLocked(group[i]->facility_id, *prepared[i]);
  }
  return true;
}

ReportResult Model::ApplyPreparedLocked(const std::string& facility_id, PreparedReport& report) {
  ReportResult result{.seq = report.seq,
                      .plane_changes = std::move(report.plane_changes),
                      .service_reports_kept = static_cast<uint32_t>(report.service_reports.size()),
                      .service_reports_dropped = std::move(report.service_reports_dropped)};
  for (const v1::ServiceLatencyReport* service_report : report.service_reports) {
    service_reports_.Put(facility_id, *service_report);
  }
  if (report.fabric) {
    entities_.fabrics[facility_id] = *std::move(report.fabric);
    // What a facility can exchange with the backbone follows its planes.
    if (!result.plane_changes.empty()) InvalidateSnapshot();
  }
  for (auto& [link, health] : report.updated) {
    if (snapshot_) pending_health_.insert(link);
    v1::LinkHealth& current = *link->mutable_health();
    if (current.state() != health.state()) {
      result.changes.push_back({link->id(), current.state(), health.state()});
      ++revision_;  // a state change re-plans (telemetry_service); a measurement alone does not
    }
    current = std::move(health);
  }
  sessions_[report.session_key] = std::move(report.session);
  return result;
}

void Model::NameUnwrittenLocked(const std::string& key, uint64_t before_seq, std::string* cause) const {
  auto unwritten = unwritten_.find(key);
  auto session = sessions_.find(key);
  // A session an import reset: its agent starts over with a snapshot.
  if (unwritten == unwritten_.end() || session == sessions_.end()) return;
  const uint64_t last = before_seq != 0 ? before_seq - 1 : session->second.last_applied_seq();
  for (uint64_t seq = unwritten->second.first_seq; seq <= last; ++seq) {
    if (!cause->empty()) *cause += ", ";
    absl::StrAppend(cause, "telemetry from ", unwritten->second.reporter, " seq ", seq);
  }
}

size_t Model::PutUnwrittenLocked(const std::string& key, bool with_session, const std::set<const v1::Link*>& skip,
                                 state::ChangeSet& changes) const {
  auto unwritten = unwritten_.find(key);
  auto session = sessions_.find(key);
  if (unwritten == unwritten_.end() || session == sessions_.end()) return 0;
  size_t links = 0;
  for (const v1::Link* link : unwritten->second.links) {
    if (skip.count(link)) continue;  // the caller writes it itself
    changes.Put(Kind::kLinkHealth, link->id(), link->health());
    ++links;
  }
  if (with_session) changes.Put(Kind::kAgentSession, key, session->second);
  return links;
}

absl::StatusOr<size_t> Model::WriteUnwrittenLocked(const std::string& key) {
  if (!unwritten_.contains(key)) return 0;
  std::string cause;
  NameUnwrittenLocked(key, 0, &cause);
  if (cause.empty()) {  // a session an import reset
    unwritten_.erase(key);
    return 0;
  }
  state::ChangeSet changes(std::move(cause));
  const size_t links = PutUnwrittenLocked(key, /*with_session=*/true, {}, changes);
  if (auto committed = store_->CommitUnsynced(changes); !committed.ok()) return committed.status();
  unwritten_.erase(key);
  return links;
}

absl::StatusOr<size_t> Model::FlushMeasurements(bool sync) {
  // Taken under mu_ (copies: cheap), serialized and committed outside it, so
  // that reports go on being applied while the store writes; write_order_mu_
  // keeps every other writer of these records from writing before this
  // commit and then seeing it overwrite a newer value with an older one.
  std::lock_guard order(write_order_mu_);
  TakenMeasurements taken;
  {
    std::lock_guard lock(mu_);
    taken = TakeUnwrittenLocked();
  }
  if (!taken.cause.empty()) {
    state::ChangeSet changes(std::move(taken.cause));
    for (const auto& [id, health] : taken.links) changes.Put(Kind::kLinkHealth, id, health);
    for (const auto& [key, session] : taken.sessions) changes.Put(Kind::kAgentSession, key, session);
    if (auto committed = store_->CommitUnsynced(changes); !committed.ok()) {
      std::lock_guard lock(mu_);
      RestoreUnwrittenLocked(std::move(taken.entries));
      return committed.status();
    }
  }
  if (sync) {
    if (absl::Status synced = store_->Sync(); !synced.ok()) return synced;
  }
  return taken.links.size();
}

Model::TakenMeasurements Model::TakeUnwrittenLocked() {
  TakenMeasurements taken;
  std::vector<std::string> keys;
  keys.reserve(unwritten_.size());
  for (const auto& [key, unwritten] : unwritten_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  for (const std::string& key : keys) NameUnwrittenLocked(key, 0, &taken.cause);
  for (const std::string& key : keys) {
    auto unwritten = unwritten_.find(key);
    auto session = sessions_.find(key);
    // Only sessions an import reset name nothing: their entries go too.
    if (!taken.cause.empty() && session != sessions_.end()) {
      for (const v1::Link* link : unwritten->second.links) taken.links.emplace_back(link->id(), link->health());
      taken.sessions.emplace_back(key, session->second);
    }
    taken.entries.emplace(key, std::move(unwritten->second));
    unwritten_.erase(unwritten);
  }
  return taken;
}

void Model::RestoreUnwrittenLocked(absl::flat_hash_map<std::string, UnwrittenMeasurements> entries) {
  for (auto& [key, taken] : entries) {
    // An import may have reset the session since: then it starts over.
    if (!sessions_.contains(key)) continue;
    auto [it, inserted] = unwritten_.try_emplace(key, std::move(taken));
    if (inserted) continue;
    // Reports applied while the write failed: the older seqs go first.
    UnwrittenMeasurements& now = it->second;
    now.first_seq = std::min(now.first_seq, taken.first_seq);
    now.links.insert(taken.links.begin(), taken.links.end());
  }
}

absl::StatusOr<Model::PreparedReport> Model::PrepareReportLocked(const PendingReport& pending) {
  const std::string& facility_id = pending.facility_id;
  const v1::AgentMessage& message = pending.message;
  PreparedReport prepared;
  prepared.session_key = SessionKey(facility_id, pending.agent_id);
  auto session_it = sessions_.find(prepared.session_key);
  if (session_it == sessions_.end() || session_it->second.incarnation() != pending.incarnation) {
    return absl::FailedPreconditionError(
        absl::StrCat("no open session for agent ", prepared.session_key, " incarnation ", pending.incarnation));
  }
  v1::AgentSession& session = prepared.session = session_it->second;

  const v1::Update* update = nullptr;
  uint64_t seq = 0;
  switch (message.kind_case()) {
    case v1::AgentMessage::kSnapshot: update = &message.snapshot(); seq = update->seq(); break;
    case v1::AgentMessage::kDelta: update = &message.delta(); seq = update->seq(); break;
    case v1::AgentMessage::kSync: seq = message.sync().seq(); break;
    case v1::AgentMessage::kHello: return absl::InvalidArgumentError("hello may only open the stream");
    case v1::AgentMessage::KIND_NOT_SET: return absl::InvalidArgumentError("empty agent message");
  }
  prepared.seq = seq;
  if (seq == 0) return absl::InvalidArgumentError("sequence numbers start at 1");
  if (seq <= session.last_applied_seq()) {
    prepared.duplicate = true;
    return prepared;
  }
  if (seq != session.last_applied_seq() + 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("sequence gap: expected ", session.last_applied_seq() + 1, ", got ", seq));
  }
  const bool fresh = session.last_applied_seq() == 0;
  if (message.has_delta() && (fresh || session.in_snapshot())) {
    return absl::InvalidArgumentError(fresh ? "a new incarnation must start with a snapshot"
                                            : "delta inside a snapshot: send the sync marker first");
  }
  if (message.has_sync() && !session.in_snapshot()) return absl::InvalidArgumentError("sync marker without a snapshot");

  // Validate everything before changing anything.
  auto& updated = prepared.updated;
  if (update != nullptr) {
    constexpr int kMaxLinksPerUpdate = 100'000;
    if (update->links_size() > kMaxLinksPerUpdate) {
      return absl::InvalidArgumentError(absl::StrCat("too many links in one update (", update->links_size(), ")"));
    }
    updated.reserve(update->links_size());
    for (const auto& report : update->links()) {
      v1::Link* link = FindLinkLocked(report.link_id());
      if (link == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("unknown link \"", report.link_id(), "\""));
      }
      if (link->src_facility_id() != facility_id) {
        return absl::PermissionDeniedError(absl::StrCat("agent of ", facility_id, " may not report link ",
                                                        report.link_id(), " of facility ",
                                                        link->src_facility_id()));
      }
      if (auto status = ValidateHealth(report); !status.ok()) return status;
      updated.emplace_back(link, report.health());
    }
    std::vector<const v1::Link*> reported;
    reported.reserve(updated.size());
    for (const auto& [link, health] : updated) reported.push_back(link);
    std::sort(reported.begin(), reported.end());
    if (auto twice = std::adjacent_find(reported.begin(), reported.end()); twice != reported.end()) {
      return absl::InvalidArgumentError(absl::StrCat("link ", (*twice)->id(), " reported twice in one update"));
    }
  }

  // Fabric planes: each reported plane's health replaces the stored one.
  if (update != nullptr && update->planes_size() > 0) {
    auto fabric_it = entities_.fabrics.find(facility_id);
    if (fabric_it == entities_.fabrics.end()) {
      return absl::InvalidArgumentError(absl::StrCat("facility ", facility_id, " has no fabric to report planes of"));
    }
    v1::Fabric& fabric = prepared.fabric.emplace(fabric_it->second);
    std::set<uint32_t> reported;
    for (const v1::FabricPlaneHealth& health : update->planes()) {
      if (!reported.insert(health.plane()).second) {
        return absl::InvalidArgumentError(absl::StrCat("plane ", health.plane(), " reported twice in one update"));
      }
      auto stored = std::find_if(fabric.mutable_plane_health()->begin(), fabric.mutable_plane_health()->end(),
                                 [&](const v1::FabricPlaneHealth& h) { return h.plane() == health.plane(); });
      const bool known = stored != fabric.plane_health().end();
      const v1::FabricPlaneHealth previous = known ? *stored : v1::FabricPlaneHealth();
      if (known) {
        *stored = health;
      } else {
        *fabric.add_plane_health() = health;
      }
      if (previous.state() != health.state() || !SameRails(previous, health)) {
        prepared.plane_changes.push_back({health.plane(), previous.state(), health.state(), health.failed_rails_size()});
      }
    }
    if (absl::Status valid = fabric::ValidateFabric(fabric); !valid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("fabric of ", facility_id, ": ", valid.message()));
    }
  }

  if (update != nullptr) {
    if (absl::Status checked = PrepareServiceReports(facility_id, *update, prepared); !checked.ok()) return checked;
  }

  if (message.has_snapshot()) {
    if (!session.in_snapshot()) session.clear_snapshot_link_ids();
    session.set_in_snapshot(true);
    for (const auto& [link, health] : updated) session.add_snapshot_link_ids(link->id());
  } else if (message.has_sync()) {
    // The snapshot is complete: what it did not mention is no longer known.
    std::set<std::string> reported(session.snapshot_link_ids().begin(), session.snapshot_link_ids().end());
    for (auto& [id, link] : entities_.links) {
      if (link.src_facility_id() != facility_id || reported.count(id)) continue;
      if (link.health().state() == v1::OPER_STATE_UNKNOWN) continue;
      updated.emplace_back(&link, v1::LinkHealth());
    }
    session.set_in_snapshot(false);
    session.clear_snapshot_link_ids();
  }
  session.set_last_applied_seq(seq);
  return prepared;
}

}  // namespace geodesic::pathcomp
