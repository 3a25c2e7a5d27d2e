#pragma once
// tectl's connection to a pathcomp replica's Operator API.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "geodesic/v1/operator.grpc.pb.h"
#include "tls/credentials.h"

namespace geodesic::cli {

// Messages up to this size both ways (gRPC's default receive limit is 4 MB):
// a whole imported inventory (Cogentco with its 38,612 demands is ~2 MB) and
// the lists that echo one back (60,000 workloads are ~6 MB).
inline constexpr int kMaxOperatorMessageBytes = 256 << 20;

// A stub over mTLS with the operator's certificate (`files`, already
// validated with tls::ValidateTlsFiles), expecting a pathcomp identity on the
// other end. Connects lazily: errors come with the first call.
std::unique_ptr<v1::Operator::Stub> ConnectOperator(const std::string& server, const tls::TlsFiles& files);

// The call's status as an absl::Status of the same code, its message naming
// the code: "PERMISSION_DENIED: operator viewer has role viewer; this needs admin".
absl::Status FromGrpc(const grpc::Status& status);

// A follower replica refuses changes with FAILED_PRECONDITION and
// "... send changes to the leader: <replica> <host:port>": that address.
std::optional<std::string> LeaderAddressFrom(const grpc::Status& status);

// Runs a change `call` against `stub`; when the replica answers that it is a
// follower, says so on stderr and runs it once more against the leader it
// named (mTLS with `tls`).
using OperatorCall = std::function<grpc::Status(v1::Operator::StubInterface&)>;
grpc::Status CallLeader(const std::string& server, const tls::TlsFiles& tls, v1::Operator::StubInterface& stub,
                        const OperatorCall& call);

// Removes intent `id` through CallLeader; the plan generation current afterwards.
absl::StatusOr<uint64_t> RemoveIntentAt(const std::string& server, const tls::TlsFiles& tls,
                                        v1::Operator::StubInterface& stub, const std::string& id);

// Sets `context`'s deadline `timeout` from now.
void SetTimeout(grpc::ClientContext& context, std::chrono::seconds timeout);

}  // namespace geodesic::cli
