// ModelSource over a pathcomp state directory, opened read-only. The model is
// interpreted by pathcomp's own Model, so the answers are the ones the
// Operator API would give for the same store.
#include "absl/strings/str_cat.h"
#include "cli/model_source.h"
#include "pathcomp/service/model.h"
#include "state/kind.h"
#include "state/rocks_store.h"

namespace geodesic::cli {
namespace {

class StoreModelSource final : public ModelSource {
 public:
  StoreModelSource(std::string dir, std::unique_ptr<pathcomp::Model> model)
      : dir_(std::move(dir)), model_(std::move(model)) {}

  std::string where() const override { return absl::StrCat("the store in ", dir_); }

  absl::StatusOr<v1::ListFacilitiesResponse> ListFacilities() override {
    v1::ListFacilitiesResponse response;
    for (auto& facility : model_->Facilities()) *response.add_facilities() = std::move(facility);
    return response;
  }

  absl::StatusOr<v1::ListNodesResponse> ListNodes(const v1::ListNodesRequest& request) override {
    v1::ListNodesResponse response;
    for (auto& node : model_->Nodes()) {
      if (request.facility_id().empty() || node.facility_id() == request.facility_id()) {
        *response.add_nodes() = std::move(node);
      }
    }
    return response;
  }

  absl::StatusOr<v1::ListLinksResponse> ListLinks(const v1::ListLinksRequest& request) override {
    v1::ListLinksResponse response;
    // As the Operator API does: drains are intents; show their effect as the solver sees it.
    const std::shared_ptr<const pathcomp::Snapshot> snapshot = model_->CurrentSnapshot();
    for (auto& link : model_->Links()) {
      if (!request.facility_id().empty() && link.src_facility_id() != request.facility_id()) continue;
      const int index = snapshot->LinkIndex(link.id());
      if (index >= 0 && snapshot->link_state(index).drained) link.set_admin_state(v1::ADMIN_STATE_DRAINED);
      *response.add_links() = std::move(link);
    }
    return response;
  }

  absl::StatusOr<v1::ListFabricsResponse> ListFabrics(const v1::ListFabricsRequest& request) override {
    v1::ListFabricsResponse response;
    for (auto& fabric : model_->Fabrics()) {
      if (request.facility_id().empty() || fabric.facility_id() == request.facility_id()) {
        *response.add_fabrics() = std::move(fabric);
      }
    }
    return response;
  }

  absl::StatusOr<v1::ListServicesResponse> ListServices() override {
    v1::ListServicesResponse response;
    for (auto& service : model_->Services()) *response.add_services() = std::move(service);
    return response;
  }

  absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads() override {
    v1::ListWorkloadsResponse response;
    for (auto& workload : model_->Workloads()) *response.add_workloads() = std::move(workload);
    return response;
  }

  absl::StatusOr<v1::ListIntentsResponse> ListIntents() override {
    v1::ListIntentsResponse response;
    for (auto& intent : model_->Intents()) *response.add_intents() = std::move(intent);
    return response;
  }

  absl::StatusOr<v1::GetPlanResponse> GetPlan(const v1::GetPlanRequest& request) override {
    std::shared_ptr<const v1::Plan> plan = model_->CurrentPlan();
    if (!plan) return absl::NotFoundError(absl::StrCat("no plan in ", where(), " yet"));
    v1::GetPlanResponse response;
    v1::Plan& out = *response.mutable_plan();
    out = *plan;
    if (!request.facility_id().empty()) {
      out.clear_sites();
      for (const auto& site : plan->sites()) {
        if (site.facility_id() == request.facility_id()) *out.add_sites() = site;
      }
      if (out.sites().empty()) {
        return absl::NotFoundError(absl::StrCat("unknown facility \"", request.facility_id(), "\""));
      }
    }
    return response;
  }

  absl::StatusOr<v1::ListJournalResponse> ListJournal(const v1::ListJournalRequest& request) override {
    return model_->Journal(request);
  }

 private:
  std::string dir_;
  std::unique_ptr<pathcomp::Model> model_;
};

}  // namespace

absl::StatusOr<ModelSourcePtr> OpenStoreModelSource(const std::string& dir) {
  state::RocksStoreOptions options;
  options.read_only = true;
  auto store = state::OpenRocksStore(dir, options);
  if (!store.ok()) return store.status();
  auto model = pathcomp::Model::Open(*std::move(store));
  if (!model.ok()) return model.status();
  return std::make_unique<StoreModelSource>(dir, *std::move(model));
}

}  // namespace geodesic::cli
