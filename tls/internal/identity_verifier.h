// Private to tls/: the post-handshake check that the peer certificate carries a
// geodesic identity. Replaces gRPC's hostname check: peers are named by their
// SPIFFE id, not by the address we dialled.
#ifndef GEODESIC_TLS_INTERNAL_IDENTITY_VERIFIER_H_
#define GEODESIC_TLS_INTERNAL_IDENTITY_VERIFIER_H_

#include <grpcpp/security/tls_certificate_verifier.h>

#include <memory>
#include <optional>

#include "tls/identity.h"

namespace geodesic::tls::internal {

// A verifier that accepts a peer whose certificate has exactly one URI SAN that
// ParseSpiffeId accepts and, if `expected_kind` is set, is of that kind.
// Runs after gRPC has checked the chain against the CA, so it only looks at
// names. Synchronous, stateless, thread-safe.
std::shared_ptr<grpc::experimental::CertificateVerifier> MakeIdentityVerifier(
    std::optional<Identity::Kind> expected_kind);

}  // namespace geodesic::tls::internal

#endif  // GEODESIC_TLS_INTERNAL_IDENTITY_VERIFIER_H_
