#include "cli/operator_client.h"

#include <iostream>

#include "absl/strings/str_cat.h"

namespace geodesic::cli {

std::unique_ptr<v1::Operator::Stub> ConnectOperator(const std::string& server, const tls::TlsFiles& files) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxSendMessageSize(kMaxOperatorMessageBytes);
  arguments.SetMaxReceiveMessageSize(kMaxOperatorMessageBytes);
  auto channel = grpc::CreateCustomChannel(
      server, tls::MakeChannelCredentials(files, tls::Identity::Kind::kPathcomp), arguments);
  return v1::Operator::NewStub(channel);
}

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  const auto code = static_cast<absl::StatusCode>(status.error_code());  // same numbering
  return absl::Status(code, absl::StrCat(absl::StatusCodeToString(code), ": ", status.error_message()));
}

grpc::Status CallLeader(const std::string& server, const tls::TlsFiles& tls, v1::Operator::StubInterface& stub,
                        const OperatorCall& call) {
  grpc::Status status = call(stub);
  if (auto leader = LeaderAddressFrom(status); leader && !server.empty()) {
    std::cerr << "tectl: " << server << " is a follower; sending to the leader at " << *leader << "\n";
    auto leader_stub = ConnectOperator(*leader, tls);
    status = call(*leader_stub);
  }
  return status;
}

absl::StatusOr<uint64_t> RemoveIntentAt(const std::string& server, const tls::TlsFiles& tls,
                                        v1::Operator::StubInterface& stub, const std::string& id) {
  v1::DeleteIntentResponse response;
  const grpc::Status status = CallLeader(server, tls, stub, [&](v1::Operator::StubInterface& to) {
    grpc::ClientContext context;
    SetTimeout(context, std::chrono::seconds(60));
    v1::DeleteIntentRequest request;
    request.set_id(id);
    return to.DeleteIntent(&context, request, &response);
  });
  if (!status.ok()) return FromGrpc(status);
  return response.plan_generation();
}

void SetTimeout(grpc::ClientContext& context, std::chrono::seconds timeout) {
  context.set_deadline(std::chrono::system_clock::now() + timeout);
}

std::optional<std::string> LeaderAddressFrom(const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::FAILED_PRECONDITION) return std::nullopt;
  constexpr std::string_view kMarker = "send changes to the leader: ";
  const std::string& message = status.error_message();
  const size_t at = message.find(kMarker);
  if (at == std::string::npos) return std::nullopt;
  // "<replica> <host:port>"
  const size_t space = message.find(' ', at + kMarker.size());
  if (space == std::string::npos) return std::nullopt;
  std::string address = message.substr(space + 1);
  address = address.substr(0, address.find_first_of(" \n"));
  if (address.empty() || address.find(':') == std::string::npos) return std::nullopt;
  return address;
}

}  // namespace geodesic::cli
