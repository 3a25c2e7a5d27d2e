#pragma once
// The Operator API's read answers, computed from a Model: one definition for
// the service that serves them and for tools reading a store offline, so both
// answer the same question the same way. Thread-safe as the Model is.
#include "absl/status/statusor.h"
#include "geodesic/v1/operator.pb.h"
#include "pathcomp/model/model.h"

namespace geodesic::pathcomp {

// Nodes of request.facility_id (all when empty).
v1::ListNodesResponse ListNodes(const Model& model, const v1::ListNodesRequest& request);
// Links leaving request.facility_id (all when empty); a drained link (a drain
// intent on it, its node or facility) shows ADMIN_STATE_DRAINED, as the
// solver sees it.
v1::ListLinksResponse ListLinks(Model& model, const v1::ListLinksRequest& request);
// Fabrics of request.facility_id (all when empty).
v1::ListFabricsResponse ListFabrics(const Model& model, const v1::ListFabricsRequest& request);

// `plan` (null: NotFound "no plan computed yet") narrowed to the site of
// `facility_id` (all sites when empty; NotFound for a facility the plan has
// no site for).
[[nodiscard]] absl::StatusOr<v1::Plan> PlanForSite(std::shared_ptr<const v1::Plan> plan,
                                                   const std::string& facility_id);

// What an import changed, as ImportTopology answers it (plan_generation unset).
v1::ImportTopologyResponse ToImportResponse(const ImportResult& result);

}  // namespace geodesic::pathcomp
