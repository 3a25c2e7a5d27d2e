// ModelSource over a pathcomp state directory, opened read-only through the
// store's own read API (pathcomp/model/offline_store.h), so the answers are the
// ones the Operator API would give for the same store.
#include "absl/strings/str_cat.h"
#include "cli/model_source.h"
#include "pathcomp/model/offline_store.h"

namespace geodesic::cli {
namespace {

class StoreModelSource final : public ModelSource {
 public:
  explicit StoreModelSource(std::unique_ptr<pathcomp::OfflineStore> store) : store_(std::move(store)) {}

  std::string where() const override { return absl::StrCat("the store in ", store_->dir()); }

  absl::StatusOr<v1::ListFacilitiesResponse> ListFacilities() override { return store_->ListFacilities(); }
  absl::StatusOr<v1::ListNodesResponse> ListNodes(const v1::ListNodesRequest& request) override {
    return store_->ListNodes(request);
  }
  absl::StatusOr<v1::ListLinksResponse> ListLinks(const v1::ListLinksRequest& request) override {
    return store_->ListLinks(request);
  }
  absl::StatusOr<v1::ListFabricsResponse> ListFabrics(const v1::ListFabricsRequest& request) override {
    return store_->ListFabrics(request);
  }
  absl::StatusOr<v1::ListServicesResponse> ListServices() override { return store_->ListServices(); }
  absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads() override { return store_->ListWorkloads(); }
  absl::StatusOr<v1::ListIntentsResponse> ListIntents() override { return store_->ListIntents(); }
  absl::StatusOr<v1::GetPlanResponse> GetPlan(const v1::GetPlanRequest& request) override {
    return store_->GetPlan(request);
  }
  absl::StatusOr<v1::ListJournalResponse> ListJournal(const v1::ListJournalRequest& request) override {
    return store_->ListJournal(request);
  }

 private:
  std::unique_ptr<pathcomp::OfflineStore> store_;
};

}  // namespace

absl::StatusOr<ModelSourcePtr> OpenStoreModelSource(const std::string& dir) {
  auto store = pathcomp::OfflineStore::OpenReadOnly(dir);
  if (!store.ok()) return store.status();
  return std::make_unique<StoreModelSource>(*std::move(store));
}

}  // namespace geodesic::cli
