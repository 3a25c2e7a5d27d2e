#include "cli/operator_client.h"

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

void SetTimeout(grpc::ClientContext& context, std::chrono::seconds timeout) {
  context.set_deadline(std::chrono::system_clock::now() + timeout);
}

}  // namespace geodesic::cli
