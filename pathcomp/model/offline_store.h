#pragma once
// pathcomp's store as tools see it on the machine that holds it: read it as
// the Operator API would answer (beside a running pathcomp too), or import an
// inventory into it while no pathcomp has it open. This is the store's own
// read/import API: tools use it instead of pathcomp's classes, and every
// write still goes through the one model code pathcomp itself runs (RocksDB's
// lock keeps a running pathcomp and an import from both writing).
// Thread-compatible.
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "geodesic/v1/operator.pb.h"
#include "topology/topology.h"

namespace geodesic::pathcomp {

class Model;

class OfflineStore {
 public:
  // Opens the store in `dir` read-only: safe beside the pathcomp that owns
  // it; reads show `dir` as it was when opened. NotFound when `dir` holds no
  // store; the store's errors otherwise.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<OfflineStore>> OpenReadOnly(const std::string& dir);
  // Opens the store in `dir` to import into it: FailedPrecondition, naming
  // the remedy, while a pathcomp has it open. A missing store is created.
  // With `dry_run`, opens it read-only instead (a missing store reads empty).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<OfflineStore>> OpenForImport(const std::string& dir,
                                                                                   bool dry_run);
  ~OfflineStore();

  const std::string& dir() const { return dir_; }

  // The Operator API's reads (operator.proto), with the same answers.
  v1::ListFacilitiesResponse ListFacilities() const;
  v1::ListNodesResponse ListNodes(const v1::ListNodesRequest& request) const;
  v1::ListLinksResponse ListLinks(const v1::ListLinksRequest& request) const;
  v1::ListFabricsResponse ListFabrics(const v1::ListFabricsRequest& request) const;
  v1::ListServicesResponse ListServices() const;
  v1::ListWorkloadsResponse ListWorkloads() const;
  v1::ListIntentsResponse ListIntents() const;
  // The current plan (no install status: a store knows none). NotFound
  // before the first plan or for a facility the plan has no site for.
  [[nodiscard]] absl::StatusOr<v1::GetPlanResponse> GetPlan(const v1::GetPlanRequest& request) const;
  // InvalidArgument when the limit is above 10000.
  [[nodiscard]] absl::StatusOr<v1::ListJournalResponse> ListJournal(const v1::ListJournalRequest& request) const;

  // Imports `inventory` (validated as pathcomp validates an ImportTopology
  // request) journaled with `cause`; changes nothing on a dry run (OpenForImport
  // with dry_run) or an error. plan_generation is the store's current plan's.
  [[nodiscard]] absl::StatusOr<v1::ImportTopologyResponse> Import(const topology::Topology& inventory,
                                                                 const std::string& cause,
                                                                 bool replace_workloads);

 private:
  OfflineStore(std::string dir, std::unique_ptr<Model> model, bool dry_run);

  std::string dir_;
  std::unique_ptr<Model> model_;
  bool dry_run_ = false;
};

}  // namespace geodesic::pathcomp
