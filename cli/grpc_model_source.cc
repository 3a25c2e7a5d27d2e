// ModelSource over the Operator API of a running pathcomp.
#include "absl/strings/str_cat.h"
#include "cli/model_source.h"
#include "cli/operator_client.h"

namespace geodesic::cli {
namespace {

class GrpcModelSource final : public ModelSource {
 public:
  GrpcModelSource(std::shared_ptr<v1::Operator::StubInterface> stub, std::string server,
                  std::chrono::seconds timeout)
      : stub_(std::move(stub)), server_(std::move(server)), timeout_(timeout) {}

  std::string where() const override { return absl::StrCat("pathcomp at ", server_); }
  bool live() const override { return true; }

  absl::StatusOr<v1::ListFacilitiesResponse> ListFacilities() override {
    return Call(&v1::Operator::StubInterface::ListFacilities, v1::ListFacilitiesRequest());
  }
  absl::StatusOr<v1::ListNodesResponse> ListNodes(const v1::ListNodesRequest& request) override {
    return Call(&v1::Operator::StubInterface::ListNodes, request);
  }
  absl::StatusOr<v1::ListLinksResponse> ListLinks(const v1::ListLinksRequest& request) override {
    return Call(&v1::Operator::StubInterface::ListLinks, request);
  }
  absl::StatusOr<v1::ListFabricsResponse> ListFabrics(const v1::ListFabricsRequest& request) override {
    return Call(&v1::Operator::StubInterface::ListFabrics, request);
  }
  absl::StatusOr<v1::ListServicesResponse> ListServices() override {
    return Call(&v1::Operator::StubInterface::ListServices, v1::ListServicesRequest());
  }
  absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads() override {
    return Call(&v1::Operator::StubInterface::ListWorkloads, v1::ListWorkloadsRequest());
  }
  absl::StatusOr<v1::ListIntentsResponse> ListIntents() override {
    return Call(&v1::Operator::StubInterface::ListIntents, v1::ListIntentsRequest());
  }
  absl::StatusOr<v1::GetPlanResponse> GetPlan(const v1::GetPlanRequest& request) override {
    return Call(&v1::Operator::StubInterface::GetPlan, request);
  }
  absl::StatusOr<v1::ListJournalResponse> ListJournal(const v1::ListJournalRequest& request) override {
    return Call(&v1::Operator::StubInterface::ListJournal, request);
  }
  absl::StatusOr<v1::ListLinkAssessmentsResponse> ListLinkAssessments(
      const v1::ListLinkAssessmentsRequest& request) override {
    return Call(&v1::Operator::StubInterface::ListLinkAssessments, request);
  }

 private:
  // One unary call with the deadline.
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(grpc::Status (v1::Operator::StubInterface::*method)(grpc::ClientContext*,
                                                                                    const Request&,
                                                                                    Response*),
                                const Request& request) {
    grpc::ClientContext context;
    SetTimeout(context, timeout_);
    Response response;
    if (grpc::Status status = (stub_.get()->*method)(&context, request, &response); !status.ok()) {
      return FromGrpc(status);
    }
    return response;
  }

  std::shared_ptr<v1::Operator::StubInterface> stub_;
  std::string server_;
  std::chrono::seconds timeout_;
};

}  // namespace

ModelSourcePtr NewGrpcModelSource(std::shared_ptr<v1::Operator::StubInterface> stub, std::string server,
                                  std::chrono::seconds timeout) {
  return std::make_unique<GrpcModelSource>(std::move(stub), std::move(server), timeout);
}

}  // namespace geodesic::cli
