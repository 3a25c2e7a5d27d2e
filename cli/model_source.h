#pragma once
// Where tectl reads the model from: a running pathcomp's Operator API, or a
// pathcomp state directory on this machine (offline). Both answer exactly as
// the Operator API's read RPCs do (operator.proto), so every command that
// reads is written once against this interface.
#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "geodesic/v1/operator.grpc.pb.h"

namespace geodesic::cli {

// Errors are the server's (its code and message) or the store's.
// Thread-compatible.
class ModelSource {
 public:
  virtual ~ModelSource() = default;

  // What the model is read from, for messages: "pathcomp at HOST:PORT" or
  // "the store in DIR".
  virtual std::string where() const = 0;
  // A running controller: its GetPlan says whether a re-plan is pending and
  // which model revision the plan reflects (a store knows neither).
  virtual bool live() const { return false; }

  [[nodiscard]] virtual absl::StatusOr<v1::ListFacilitiesResponse> ListFacilities() = 0;
  [[nodiscard]] virtual absl::StatusOr<v1::ListNodesResponse> ListNodes(
      const v1::ListNodesRequest& request) = 0;
  // Links carry the effect of drain intents in admin_state, as the solver sees them.
  [[nodiscard]] virtual absl::StatusOr<v1::ListLinksResponse> ListLinks(
      const v1::ListLinksRequest& request) = 0;
  [[nodiscard]] virtual absl::StatusOr<v1::ListFabricsResponse> ListFabrics(
      const v1::ListFabricsRequest& request) = 0;
  [[nodiscard]] virtual absl::StatusOr<v1::ListServicesResponse> ListServices() = 0;
  [[nodiscard]] virtual absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads() = 0;
  [[nodiscard]] virtual absl::StatusOr<v1::ListIntentsResponse> ListIntents() = 0;
  // NotFound when no plan was computed yet, or the site filter names no site.
  // A store knows no install status: its response has no `sites`.
  [[nodiscard]] virtual absl::StatusOr<v1::GetPlanResponse> GetPlan(const v1::GetPlanRequest& request) = 0;
  // InvalidArgument when the limit is above 10000.
  [[nodiscard]] virtual absl::StatusOr<v1::ListJournalResponse> ListJournal(
      const v1::ListJournalRequest& request) = 0;
  // Gray-failure verdicts live in a running pathcomp only: a store answers
  // Unimplemented.
  [[nodiscard]] virtual absl::StatusOr<v1::ListLinkAssessmentsResponse> ListLinkAssessments(
      const v1::ListLinkAssessmentsRequest&) {
    return absl::UnimplementedError("verdicts are judged by a running pathcomp: ask it with --server");
  }
};

using ModelSourcePtr = std::unique_ptr<ModelSource>;

// Reads through `stub`, a connection to the pathcomp at `server`
// (operator_client.h). Each call has a deadline of `timeout`.
ModelSourcePtr NewGrpcModelSource(std::shared_ptr<v1::Operator::StubInterface> stub, std::string server,
                                  std::chrono::seconds timeout = std::chrono::seconds(30));

// Opens the store in `dir` read-only (state::RocksStoreOptions::read_only):
// safe beside the pathcomp that owns it; reads show `dir` as it was when
// opened. NotFound when `dir` holds no store; the store's errors otherwise.
[[nodiscard]] absl::StatusOr<ModelSourcePtr> OpenStoreModelSource(const std::string& dir);

}  // namespace geodesic::cli
