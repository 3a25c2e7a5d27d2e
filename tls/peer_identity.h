// The authenticated caller of an RPC, for authorization at the service edge
// (DESIGN §7): "an agent reports only its own facility", "mutations need the
// operator role", and the "who" of the audit log.
//
//   absl::StatusOr<Identity> who = PeerIdentity(*context);
//   if (!who.ok()) return ToGrpcStatus(who.status());   // UNAUTHENTICATED
//   if (who->kind != Identity::Kind::kOperator || who->role < Role::kOperator)
//     return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, ...);
//
// Only meaningful on servers built with MakeServerCredentials, which has
// already verified the certificate chain. Thread-safe.
#ifndef GEODESIC_TLS_PEER_IDENTITY_H_
#define GEODESIC_TLS_PEER_IDENTITY_H_

#include <grpcpp/security/auth_context.h>
#include <grpcpp/server_context.h>

#include "absl/status/statusor.h"
#include "tls/identity.h"

namespace geodesic::tls {

// The caller's identity, from the SPIFFE id gRPC extracted from the peer
// certificate (the `peer_spiffe_id` auth property, else the single `peer_uri`).
// For an operator, `role` comes from the single OU of the peer certificate's
// subject. Unauthenticated, with the reason, when the call is not over mTLS,
// the certificate has no or several URI SANs, the URI is not a geodesic
// identity, or an operator certificate has no valid role.
// Works for sync and callback services (both contexts derive from
// ServerContextBase).
absl::StatusOr<Identity> PeerIdentity(const grpc::ServerContextBase& context);

// Same, from an auth context; for interceptors and tests.
absl::StatusOr<Identity> PeerIdentity(const grpc::AuthContext& auth_context);

}  // namespace geodesic::tls

#endif  // GEODESIC_TLS_PEER_IDENTITY_H_
