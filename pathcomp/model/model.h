#pragma once
// pathcomp's model of the backbone: the store is the source of truth and this
// class its only writer; an in-memory copy serves reads and solves.
// Thread-safe: every method may be called from any thread.
//
// Its parts, by responsibility: the entities (entities.h) and the rules they
// follow (entity_rules.h), telemetry and agent sessions (model_telemetry.cc),
// imports (model_import.cc), plans (plan_history.h), the audit log
// (audit_log.h) and the journal's pages (journal_page.h). Plans and the audit
// log keep their own lock. The entities and the sessions share one: an
// import replaces the inventory, resets the sessions of facilities with new
// links and checks every kept workload and intent against what it leaves, all
// as one commit, and a report is checked against the links it names and the
// session it continues; with separate locks either could see half of the other.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "geodesic/v1/health.pb.h"
#include "geodesic/v1/model.pb.h"
#include "geodesic/v1/operator.pb.h"
#include "geodesic/v1/plan.pb.h"
#include "geodesic/v1/telemetry.pb.h"
#include "pathcomp/model/audit_log.h"
#include "pathcomp/model/entities.h"
#include "pathcomp/model/journal_retention.h"
#include "pathcomp/model/plan_history.h"
#include "pathcomp/model/service_report_book.h"
#include "pathcomp/solver/snapshot.h"
#include "state/change_set.h"
#include "state/store.h"
#include "state/typed_access.h"
#include "topology/topology.h"

namespace geodesic::pathcomp {

struct HealthChange {
  std::string link_id;
  v1::OperState previous;
  v1::OperState current;
};

// A fabric plane whose health changed (its state, or the set of failed rails).
struct PlaneChange {
  uint32_t plane = 0;
  v1::OperState previous;
  v1::OperState current;
  int failed_rails = 0;
};

// The outcome of one telemetry message.
struct ReportResult {
  uint64_t seq = 0;
  bool duplicate = false;  // already applied earlier; acknowledged, not re-applied
  // Measurements only (see ApplyReport): applied to the model, not yet
  // written; the next FlushMeasurements writes them. Otherwise the report is
  // stored (and synced) before ApplyReport returns.
  bool perishable = false;
  std::vector<HealthChange> changes{};
  std::vector<PlaneChange> plane_changes{};
  // Service latency reports kept, and those left out (why, one line each):
  // a report about a chain, hop, service or replica the model does not have
  // (now) is left out rather than refusing the message, because its agent
  // cannot know, and would resend the refused message forever.
  uint32_t service_reports_kept = 0;
  std::vector<std::string> service_reports_dropped{};
};

struct ImportOptions {
  // The inventory's workloads replace every workload of the model; otherwise
  // they are added or replaced by id and the others are kept.
  bool replace_workloads = false;
  bool dry_run = false;  // validate and count; change nothing
};

// What an import changed for one kind of entity.
struct ImportCount {
  state::Kind kind;
  uint32_t added = 0, changed = 0, removed = 0, unchanged = 0;
};

struct ImportResult {
  std::vector<ImportCount> counts;  // facility, node, link, fabric, service, workload
  uint64_t journal_seq = 0;         // 0 when nothing changed (or a dry run)
  // Facilities with links the import added: nothing is known of their health
  // until their agents report them, so their sessions were reset and their
  // agents must send a fresh snapshot (see TelemetryService::Resync).
  std::vector<std::string> resync_facilities;
  bool changed() const { return journal_seq != 0; }
};

class Model {
 public:
  // Loads the model from `store` as it is.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Model>> Open(state::StorePtr store);
  // Writes and syncs the measurements not yet written (FlushMeasurements).
  ~Model();

  // --- Inventory ---
  // Makes facilities, nodes, links, fabrics and services those of `inventory`
  // (a validated topology) in one commit journaled with `cause`; measured
  // link health and fabric plane health outlive the import; workloads per
  // `options`. FailedPrecondition, changing nothing, when a kept workload or
  // intent would refer to something the import removes.
  [[nodiscard]] absl::StatusOr<ImportResult> ImportInventory(const topology::Topology& inventory,
                                                             const std::string& cause,
                                                             const ImportOptions& options = {});
  // The inventory file of pathcomp's config (`path`), at start: imported only
  // when its content differs from the last one applied this way, so an
  // unchanged file does not undo what `tectl import` did since. nullopt when
  // skipped.
  [[nodiscard]] absl::StatusOr<std::optional<ImportResult>> ApplyConfiguredInventory(
      const topology::Topology& inventory, const std::string& path);

  // The solver's view, built once per inventory, intent or workload change and
  // brought up to date incrementally with the health reported since.
  // `revision`, when given, gets the model revision the snapshot reflects.
  std::shared_ptr<const Snapshot> CurrentSnapshot(uint64_t* revision = nullptr);
  // Counts the changes that call for a re-plan: a link's or plane's state,
  // the inventory, intents and workloads (not measurements alone). Only
  // grows; starts at the store's last journal seq, so it grows across restarts
  // too (every bump is at least one journaled commit).
  uint64_t Revision() const;

  ModelView View() const;
  std::vector<v1::Facility> Facilities() const;
  std::vector<v1::Node> Nodes() const;
  std::vector<v1::Link> Links() const;
  std::vector<v1::Fabric> Fabrics() const;
  std::vector<v1::Service> Services() const;
  std::vector<v1::Workload> Workloads() const;
  std::vector<v1::Intent> Intents() const;
  std::optional<v1::Workload> FindWorkload(const std::string& id) const;
  std::optional<v1::Intent> FindIntent(const std::string& id) const;

  // --- Telemetry (exactly once per agent incarnation) ---
  // Returns the stored session of (facility, agent) when it belongs to
  // `incarnation`, else starts a fresh one (which requires a snapshot).
  [[nodiscard]] absl::StatusOr<v1::AgentSession> OpenSession(const std::string& facility_id,
                                                             const std::string& agent_id,
                                                             uint64_t incarnation);
  // Validates and applies one snapshot batch, sync marker or delta of a session
  // opened with OpenSession; `reporter` is the agent's identity, for the journal.
  // InvalidArgument / PermissionDenied / FailedPrecondition (sequence gap) change nothing.
  // Service latency reports must have valid values (entity/service_report_rules.h,
  // and received_at_unix_ms > 0: InvalidArgument otherwise); those about no hop
  // of the model are left out (ReportResult::service_reports_dropped).
  // A session's messages must be applied one after the other (as its stream
  // reads them).
  //
  // Durability follows what the report is (DESIGN §3):
  //  - a state change (a snapshot batch, a sync marker, a delta with fabric
  //    planes, or with a link whose oper state differs from the model's) is
  //    stored and synced before this returns, with the session that applied
  //    it and every measurement of that session applied before it. Reports
  //    of several agents arriving together are committed together (one
  //    store commit and sync, one journal entry naming each); each still
  //    succeeds or fails on its own.
  //  - a delta of measurements only (ReportResult::perishable) is applied to
  //    the model and returns at once; FlushMeasurements (or the session's
  //    next state change, or a resumed OpenSession) writes it later,
  //    coalesced: the latest health per link, with its session. A crash
  //    before then loses it from the store, and the session stored with it
  //    says so: the agent's resume sends it again (a fresh snapshot).
  // The journal names every applied report ("telemetry from <reporter> seq
  // <n>") exactly once, in the entry of the commit that wrote it.
  [[nodiscard]] absl::StatusOr<ReportResult> ApplyReport(const std::string& facility_id,
                                                         const std::string& agent_id,
                                                         uint64_t incarnation,
                                                         const v1::AgentMessage& message,
                                                         const std::string& reporter);

  // Writes the measurements applied since the last write (perishable reports,
  // see ApplyReport) in one commit: every such link's current health and its
  // session; unsynced, or synced too when `sync`. Returns the number of links
  // written (0: nothing was waiting; with `sync` the store is synced anyway).
  // On an error the measurements stay waiting for the next call.
  [[nodiscard]] absl::StatusOr<size_t> FlushMeasurements(bool sync = false);

  // The service latency reports kept (perishable: in memory only; see
  // service_report_book.h): of one chain, or of every chain when `workload_id`
  // is empty.
  std::vector<HopReport> ServiceReports(const std::string& workload_id = "") const;
  // --- Link RTT baselines (pathcomp/health/rtt_baseline.h) ---
  // Measurements, not state: written without a sync (a crash loses at most
  // the last minutes, which the next reports rebuild) and journaled as one
  // entry per call.
  [[nodiscard]] absl::Status StoreBaselines(const std::vector<v1::RttBaseline>& baselines);
  // What the store holds, for the judge at start.
  [[nodiscard]] absl::StatusOr<std::vector<v1::RttBaseline>> StoredBaselines() const;

  // --- Operator mutations; `actor` is the operator's identity ---
  // What AddIntent would refuse `intent` for, changing nothing.
  [[nodiscard]] absl::Status CheckIntent(const v1::Intent& intent) const;
  [[nodiscard]] absl::Status AddIntent(v1::Intent intent, const std::string& actor,
                                       int64_t now_unix_ms);
  [[nodiscard]] absl::Status DeleteIntent(const std::string& id, const std::string& actor);
  // The ids of metric overrides expired at `now_unix_ms`.
  std::vector<std::string> ExpiredIntents(int64_t now_unix_ms) const;
  [[nodiscard]] absl::Status AddWorkload(const v1::Workload& workload, const std::string& actor);
  [[nodiscard]] absl::Status DeleteWorkload(const std::string& id, const std::string& actor);

  // Workloads as replicated pathcomp's etcd holds them: every one of `put`
  // added or replaced and every id of `remove` removed, in one commit
  // journaled with `cause`. Each is checked on its own (CheckWorkload; a
  // pinned workload stays): the refused ones, by id, and why.
  std::vector<std::pair<std::string, absl::Status>> MirrorWorkloads(const std::vector<v1::Workload>& put,
                                                                     const std::vector<std::string>& remove,
                                                                     const std::string& cause);

  // --- Plans ---
  // The last committed plan; null before the first.
  std::shared_ptr<const v1::Plan> CurrentPlan() const;
  // Stores `plan` (not null) as the current one and in the history, which
  // keeps the newest kPlanHistoryDepth generations.
  [[nodiscard]] absl::Status CommitPlan(std::shared_ptr<const v1::Plan> plan);
  static constexpr size_t kPlanHistoryDepth = pathcomp::PlanHistory::kDepth;
  // The plans of the history, newest first, at most `limit` (0: all).
  std::vector<v1::PlanSummary> PlanHistory(size_t limit = 0) const;
  // One plan of the history; NotFound when it is not (or no longer) kept.
  [[nodiscard]] absl::StatusOr<v1::Plan> PlanAt(uint64_t generation) const;

  // --- Audit log (the newest kAuditLogDepth records) ---
  // Stores `record` with the next seq; returns that seq.
  [[nodiscard]] absl::StatusOr<uint64_t> AppendAudit(v1::AuditRecord record);
  static constexpr size_t kAuditLogDepth = pathcomp::AuditLog::kDepth;
  // Records from request.from_seq, or the newest `limit` (default 100, at most
  // 10,000: InvalidArgument above) when from_seq is 0.
  [[nodiscard]] absl::StatusOr<v1::ListAuditLogResponse> AuditLog(const v1::ListAuditLogRequest& request) const;
  // Bumped and stored once per start: the standalone controller's epoch.
  [[nodiscard]] absl::StatusOr<uint64_t> NextEpoch();

  // The store's journal as the Operator API shows it: entries from
  // request.from_seq, or the newest `limit` (default 100, at most 10,000:
  // InvalidArgument above) when from_seq is 0; values left out.
  [[nodiscard]] absl::StatusOr<v1::ListJournalResponse> Journal(
      const v1::ListJournalRequest& request) const;
  // The seq of the newest journal entry (0 for an empty store).
  uint64_t LastJournalSeq() const;
  // What the journal keeps now: its oldest and newest seqs and about how
  // many bytes (Store::JournalBytes).
  struct JournalSpan {
    uint64_t first_seq = 1, last_seq = 0;
    uint64_t bytes = 0;
  };
  JournalSpan KeptJournal() const;
  // Drops the journal entries `retention` keeps no longer (journal_retention.h);
  // returns how many went. Commits go on meanwhile.
  [[nodiscard]] absl::StatusOr<uint64_t> TrimJournal(const JournalRetention& retention, int64_t now_unix_ms);

 private:
  explicit Model(state::StorePtr store);
  absl::Status Load();
  // The caller holds mu_.
  absl::StatusOr<ImportResult> ImportInventoryLocked(
      const topology::Topology& inventory, const std::string& cause, const ImportOptions& options,
      const std::vector<std::pair<std::string, std::string>>& meta);
  // Also a new revision: whatever called it changed what the solver sees.
  void InvalidateSnapshot() { snapshot_.reset(); pending_health_.clear(); ++revision_; }
  // Rebuilds link_index_ from entities_.links. Requires mu_.
  void IndexLinksLocked();
  // The link of entities_ with this id, or null. Requires mu_.
  v1::Link* FindLinkLocked(std::string_view id) const {
    auto it = link_index_.find(id);
    return it != link_index_.end() ? it->second : nullptr;
  }
  // Telemetry (model_telemetry.cc): reports waiting to be committed together.
  struct PendingReport;
  struct PreparedReport;
  // Validates a report and says what it would change; changes nothing (the
  // link pointers it returns are for applying it, under the same lock).
  absl::StatusOr<PreparedReport> PrepareReportLocked(const PendingReport& report);
  // The service reports of `update` (model_telemetry.cc): InvalidArgument for
  // a malformed one; the others into `prepared`, kept or dropped. Requires mu_.
  absl::Status PrepareServiceReports(const std::string& facility_id, const v1::Update& update,
                                     PreparedReport& prepared) const;
  // Prepares, commits (not yet synced) and applies a group; true when some
  // report's answer rests on the store (written, or a duplicate of what an
  // earlier group wrote), so the group must sync before it answers.
  bool ApplyReportGroup(const std::vector<PendingReport*>& group);
  // Applies `report` (prepared, not a duplicate) to the model and says what
  // it changed. Requires mu_.
  ReportResult ApplyPreparedLocked(const std::string& facility_id, PreparedReport& report);
  // Measurements applied but not yet written, per session (key: facility.agent).
  struct UnwrittenMeasurements {
    std::string reporter;    // of the latest report, for the journal
    uint64_t first_seq = 0;  // the session's first applied seq not yet written
    // Links of entities_ (an import moves them to its new entities).
    absl::flat_hash_set<const v1::Link*> links;
  };
  // Names in `cause` the reports of session `key` applied and not yet
  // written, up to and excluding `before_seq` (0: its last applied).
  void NameUnwrittenLocked(const std::string& key, uint64_t before_seq, std::string* cause) const;
  // Puts into `changes` the current health of the links session `key`
  // measured and did not write yet, except those in `skip`, and the session
  // itself when `with_session`; returns the number of links. Requires mu_;
  // forgets nothing (the caller erases the entry once committed).
  size_t PutUnwrittenLocked(const std::string& key, bool with_session, const std::set<const v1::Link*>& skip,
                            state::ChangeSet& changes) const;
  // Commits (unsynced) the unwritten measurements of session `key`.
  // Requires write_order_mu_ and mu_.
  absl::StatusOr<size_t> WriteUnwrittenLocked(const std::string& key);
  // Every session's unwritten measurements, taken out of unwritten_ for a
  // commit outside mu_ (FlushMeasurements): what to write and, should the
  // write fail, what to put back.
  struct TakenMeasurements {
    std::string cause;  // empty: nothing to write
    std::vector<std::pair<std::string, v1::LinkHealth>> links;
    std::vector<std::pair<std::string, v1::AgentSession>> sessions;
    absl::flat_hash_map<std::string, UnwrittenMeasurements> entries;
  };
  // Requires write_order_mu_ and mu_.
  TakenMeasurements TakeUnwrittenLocked();
  // Puts back what a failed write took, merged with what arrived since.
  // Requires write_order_mu_ and mu_.
  void RestoreUnwrittenLocked(absl::flat_hash_map<std::string, UnwrittenMeasurements> entries);

  state::StorePtr store_;
  // Plans and the audit log hold their own state and lock (plan_history.h,
  // audit_log.h): a plan commit or an audit record never waits for telemetry.
  pathcomp::PlanHistory plans_;
  pathcomp::AuditLog audit_log_;
  // Orders the store writes of link health and agent sessions. Held around
  // FlushMeasurements' commit, which runs outside mu_ so that reports are
  // applied while it writes, and taken (before mu_) by every other writer of
  // those records (group commits, OpenSession, imports): none can commit
  // between a flush's copy and its commit, so a flush never writes an older
  // value over a newer one. Lock order: write_order_mu_, then mu_.
  std::mutex write_order_mu_;
  mutable std::mutex mu_;  // everything below
  Entities entities_;
  std::map<std::string, v1::AgentSession> sessions_;  // key: facility/agent
  std::shared_ptr<const Snapshot> snapshot_;  // null: rebuild on next use
  // Links whose health changed since snapshot_ (links of entities_: an
  // import invalidates the snapshot, and so clears these).
  absl::flat_hash_set<const v1::Link*> pending_health_;
  // entities_.links by id, hashed: every link of every report is looked up
  // (rebuilt by IndexLinksLocked wherever entities_.links is replaced).
  absl::flat_hash_map<std::string_view, v1::Link*> link_index_;
  absl::flat_hash_map<std::string, UnwrittenMeasurements> unwritten_;  // by session key
  ServiceReportBook service_reports_;  // perishable: never written to the store
  uint64_t revision_ = 0;  // see Revision(); guarded by mu_

  // Group commit of telemetry: the reports that arrive while one group is
  // being committed wait and go into the next, one store commit (one fsync)
  // for all of them. A group is answered after its sync, while the next one
  // is already being written.
  std::mutex group_mu_;
  std::vector<PendingReport*> group_queue_;
  bool group_committing_ = false;
};

}  // namespace geodesic::pathcomp
