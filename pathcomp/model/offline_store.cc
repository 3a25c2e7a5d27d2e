#include "pathcomp/model/offline_store.h"

#include "absl/strings/str_cat.h"
#include "pathcomp/model/model.h"
#include "pathcomp/model/model_queries.h"
#include "state/memory_store.h"
#include "state/rocks_store.h"

namespace geodesic::pathcomp {

OfflineStore::OfflineStore(std::string dir, std::unique_ptr<Model> model, bool dry_run)
    : dir_(std::move(dir)), model_(std::move(model)), dry_run_(dry_run) {}

OfflineStore::~OfflineStore() = default;

absl::StatusOr<std::unique_ptr<OfflineStore>> OfflineStore::OpenReadOnly(const std::string& dir) {
  state::RocksStoreOptions options;
  options.read_only = true;
  auto store = state::OpenRocksStore(dir, options);
  if (!store.ok()) return store.status();
  auto model = Model::Open(*std::move(store));
  if (!model.ok()) return model.status();
  return std::unique_ptr<OfflineStore>(new OfflineStore(dir, *std::move(model), /*dry_run=*/true));
}

absl::StatusOr<std::unique_ptr<OfflineStore>> OfflineStore::OpenForImport(const std::string& dir, bool dry_run) {
  state::RocksStoreOptions options;
  options.sync_writes = true;
  options.read_only = dry_run;
  absl::StatusOr<state::StorePtr> store = state::OpenRocksStore(dir, options);
  if (dry_run && absl::IsNotFound(store.status())) store = state::NewMemoryStore();
  if (state::IsStoreInUseError(store.status())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the store in ", dir,
        " is in use, probably by a running pathcomp; import online with --server (or stop pathcomp first)"));
  }
  if (!store.ok()) return store.status();
  auto model = Model::Open(*std::move(store));
  if (!model.ok()) return model.status();
  return std::unique_ptr<OfflineStore>(new OfflineStore(dir, *std::move(model), dry_run));
}

v1::ListFacilitiesResponse OfflineStore::ListFacilities() const {
  v1::ListFacilitiesResponse response;
  for (auto& facility : model_->Facilities()) *response.add_facilities() = std::move(facility);
  return response;
}

v1::ListNodesResponse OfflineStore::ListNodes(const v1::ListNodesRequest& request) const {
  return pathcomp::ListNodes(*model_, request);
}

v1::ListLinksResponse OfflineStore::ListLinks(const v1::ListLinksRequest& request) const {
  return pathcomp::ListLinks(*model_, request);
}

v1::ListFabricsResponse OfflineStore::ListFabrics(const v1::ListFabricsRequest& request) const {
  return pathcomp::ListFabrics(*model_, request);
}

v1::ListServicesResponse OfflineStore::ListServices() const {
  v1::ListServicesResponse response;
  for (auto& service : model_->Services()) *response.add_services() = std::move(service);
  return response;
}

v1::ListWorkloadsResponse OfflineStore::ListWorkloads() const {
  v1::ListWorkloadsResponse response;
  for (auto& workload : model_->Workloads()) *response.add_workloads() = std::move(workload);
  return response;
}

v1::ListIntentsResponse OfflineStore::ListIntents() const {
  v1::ListIntentsResponse response;
  for (auto& intent : model_->Intents()) *response.add_intents() = std::move(intent);
  return response;
}

absl::StatusOr<v1::GetPlanResponse> OfflineStore::GetPlan(const v1::GetPlanRequest& request) const {
  std::shared_ptr<const v1::Plan> plan = model_->CurrentPlan();
  if (request.generation() != 0 && (!plan || plan->generation() != request.generation())) {
    auto old = model_->PlanAt(request.generation());
    if (!old.ok()) return old.status();
    plan = std::make_shared<const v1::Plan>(*std::move(old));
  }
  if (!plan) return absl::NotFoundError(absl::StrCat("no plan in the store in ", dir_, " yet"));
  auto site_plan = PlanForSite(std::move(plan), request.facility_id());
  if (!site_plan.ok()) return site_plan.status();
  v1::GetPlanResponse response;
  *response.mutable_plan() = *std::move(site_plan);
  return response;
}

absl::StatusOr<v1::ListJournalResponse> OfflineStore::ListJournal(const v1::ListJournalRequest& request) const {
  return model_->Journal(request);
}

absl::StatusOr<v1::ImportTopologyResponse> OfflineStore::Import(const topology::Topology& inventory,
                                                               const std::string& cause,
                                                               bool replace_workloads) {
  ImportOptions options;
  options.replace_workloads = replace_workloads;
  options.dry_run = dry_run_;
  auto result = model_->ImportInventory(inventory, cause, options);
  if (!result.ok()) return result.status();
  v1::ImportTopologyResponse response = ToImportResponse(*result);
  if (auto plan = model_->CurrentPlan()) response.set_plan_generation(plan->generation());
  return response;
}

}  // namespace geodesic::pathcomp
