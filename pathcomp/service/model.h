#pragma once
// pathcomp's model of the backbone: the store is the source of truth and this
// class its only writer; an in-memory copy serves reads and solves.
// Thread-safe: every method may be called from any thread.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/model.pb.h"
#include "geodesic/v1/plan.pb.h"
#include "geodesic/v1/telemetry.pb.h"
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

// The outcome of one telemetry message.
struct ReportResult {
  uint64_t seq = 0;
  bool duplicate = false;  // already applied earlier; acknowledged, not re-applied
  std::vector<HealthChange> changes;
};

class Model {
 public:
  // Loads the model from `store` and reconciles it with `inventory` (the
  // topology file is authoritative for facilities, nodes, links' static
  // attributes and services; measured health and drains are kept).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Model>> Open(
      state::StorePtr store, const topology::Topology& inventory, std::string inventory_origin);

  ModelView View() const;
  std::vector<v1::Facility> Facilities() const;
  std::vector<v1::Node> Nodes() const;
  std::vector<v1::Link> Links() const;
  std::vector<v1::Service> Services() const;
  std::vector<v1::Workload> Workloads() const;
  std::vector<v1::Intent> Intents() const;

  // --- Telemetry (exactly once per agent incarnation) ---
  // Returns the stored session of (facility, agent) when it belongs to
  // `incarnation`, else starts a fresh one (which requires a snapshot).
  [[nodiscard]] absl::StatusOr<v1::AgentSession> OpenSession(const std::string& facility_id,
                                                             const std::string& agent_id,
                                                             uint64_t incarnation);
  // Validates and applies one snapshot batch, sync marker or delta of a session
  // opened with OpenSession; `reporter` is the agent's identity, for the journal.
  // InvalidArgument / PermissionDenied / FailedPrecondition (sequence gap) change nothing.
  [[nodiscard]] absl::StatusOr<ReportResult> ApplyReport(const std::string& facility_id,
                                                         const std::string& agent_id,
                                                         uint64_t incarnation,
                                                         const v1::AgentMessage& message,
                                                         const std::string& reporter);

  // --- Operator mutations; `actor` is the operator's identity ---
  [[nodiscard]] absl::Status AddIntent(v1::Intent intent, const std::string& actor,
                                       int64_t now_unix_ms);
  [[nodiscard]] absl::Status DeleteIntent(const std::string& id, const std::string& actor);
  [[nodiscard]] absl::Status AddWorkload(const v1::Workload& workload, const std::string& actor);
  [[nodiscard]] absl::Status DeleteWorkload(const std::string& id, const std::string& actor);

  // --- Plans ---
  // The last committed plan, if any.
  std::optional<v1::Plan> CurrentPlan() const;
  [[nodiscard]] absl::Status CommitPlan(const v1::Plan& plan);
  // Bumped and stored once per start: the standalone controller's epoch.
  [[nodiscard]] absl::StatusOr<uint64_t> NextEpoch();

 private:
  explicit Model(state::StorePtr store);
  absl::Status Load();
  absl::Status Reconcile(const topology::Topology& inventory, const std::string& origin);
  absl::Status ValidateWorkload(const v1::Workload& workload) const;  // caller holds mu_

  state::StorePtr store_;
  mutable std::mutex mu_;
  std::map<std::string, v1::Facility> facilities_;
  std::map<std::string, v1::Node> nodes_;
  std::map<std::string, v1::Link> links_;
  std::map<std::string, v1::Service> services_;
  std::map<std::string, v1::Workload> workloads_;
  std::map<std::string, v1::Intent> intents_;
  std::map<std::string, v1::AgentSession> sessions_;  // key: facility/agent
  std::optional<v1::Plan> plan_;
};

}  // namespace geodesic::pathcomp
