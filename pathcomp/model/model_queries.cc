#include "pathcomp/model/model_queries.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/util/field_mask_util.h"
#include "state/kind.h"

namespace geodesic::pathcomp {

v1::ListNodesResponse ListNodes(const Model& model, const v1::ListNodesRequest& request) {
  v1::ListNodesResponse response;
  for (auto& node : model.Nodes()) {
    if (request.facility_id().empty() || node.facility_id() == request.facility_id()) {
      *response.add_nodes() = std::move(node);
    }
  }
  return response;
}

v1::ListLinksResponse ListLinks(Model& model, const v1::ListLinksRequest& request) {
  v1::ListLinksResponse response;
  // Drains are intents; show their effect on the links as the solver sees it.
  const std::shared_ptr<const Snapshot> snapshot = model.CurrentSnapshot();
  for (auto& link : model.Links()) {
    if (!request.facility_id().empty() && link.src_facility_id() != request.facility_id()) continue;
    const int index = snapshot->LinkIndex(link.id());
    if (index >= 0 && snapshot->link_state(index).drained) link.set_admin_state(v1::ADMIN_STATE_DRAINED);
    *response.add_links() = std::move(link);
  }
  return response;
}

v1::ListFabricsResponse ListFabrics(const Model& model, const v1::ListFabricsRequest& request) {
  v1::ListFabricsResponse response;
  for (auto& fabric : model.Fabrics()) {
    if (request.facility_id().empty() || fabric.facility_id() == request.facility_id()) {
      *response.add_fabrics() = std::move(fabric);
    }
  }
  return response;
}

absl::StatusOr<v1::Plan> PlanForSite(std::shared_ptr<const v1::Plan> plan, const std::string& facility_id) {
  if (!plan) return absl::NotFoundError("no plan computed yet");
  if (facility_id.empty()) return *plan;
  // Every field but the sites, then the one asked for: a copy of the whole
  // plan first would copy every site's routes (a gigabyte on a 754-facility
  // backbone) to drop them.
  google::protobuf::FieldMask all_but_sites;
  const google::protobuf::Descriptor& fields = *v1::Plan::descriptor();
  for (int i = 0; i < fields.field_count(); ++i) {
    if (fields.field(i)->number() != v1::Plan::kSitesFieldNumber) all_but_sites.add_paths(fields.field(i)->name());
  }
  v1::Plan out;
  google::protobuf::util::FieldMaskUtil::MergeMessageTo(*plan, all_but_sites, {}, &out);
  for (const auto& site : plan->sites()) {
    if (site.facility_id() == facility_id) *out.add_sites() = site;
  }
  if (out.sites().empty()) return absl::NotFoundError(absl::StrCat("unknown facility \"", facility_id, "\""));
  return out;
}

v1::ImportTopologyResponse ToImportResponse(const ImportResult& result) {
  v1::ImportTopologyResponse response;
  for (const ImportCount& count : result.counts) {
    auto* out = response.add_counts();
    out->set_kind(std::string(state::KindName(count.kind)));
    out->set_added(count.added);
    out->set_changed(count.changed);
    out->set_removed(count.removed);
    out->set_unchanged(count.unchanged);
  }
  response.set_journal_seq(result.journal_seq);
  return response;
}

}  // namespace geodesic::pathcomp
