#include "tls/peer_identity.h"

#include <grpc/grpc_security_constants.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tls/internal/string_view.h"
#include "tls/internal/x509.h"

namespace geodesic::tls {
namespace {

using internal::ToAbsl;
using internal::ToStd;

absl::Status Unauthenticated(std::string_view why) {
  return absl::UnauthenticatedError(absl::StrCat(
      "caller is not an authenticated geodesic peer: ", ToAbsl(why)));
}

std::string_view View(const grpc::string_ref& s) {
  return std::string_view(s.data(), s.size());
}

}  // namespace

absl::StatusOr<Identity> PeerIdentity(const grpc::AuthContext& auth_context) {
  if (!auth_context.IsPeerAuthenticated()) {
    return Unauthenticated("no verified client certificate (not mTLS?)");
  }
  std::vector<grpc::string_ref> uris =
      auth_context.FindPropertyValues(GRPC_PEER_SPIFFE_ID_PROPERTY_NAME);
  if (uris.empty()) {
    // gRPC sets peer_spiffe_id only for one well-formed spiffe:// URI SAN.
    uris = auth_context.FindPropertyValues(GRPC_PEER_URI_PROPERTY_NAME);
  }
  if (uris.size() != 1) {
    return Unauthenticated(absl::StrCat(
        "certificate must have exactly one URI SAN; has ", uris.size()));
  }
  absl::StatusOr<Identity> identity = ParseSpiffeId(View(uris.front()));
  if (!identity.ok())
    return Unauthenticated(ToStd(identity.status().message()));
  if (identity->kind != Identity::Kind::kOperator) return identity;

  const std::vector<grpc::string_ref> pems =
      auth_context.FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
  if (pems.size() != 1) {
    return Unauthenticated("the peer certificate is not available");
  }
  absl::StatusOr<std::vector<internal::X509Ptr>> certs =
      internal::ParsePemCertificates(View(pems.front()));
  if (!certs.ok()) return Unauthenticated(ToStd(certs.status().message()));
  absl::StatusOr<Role> role = internal::RoleFromCertificate(*certs->front());
  if (!role.ok()) {
    return Unauthenticated(
        absl::StrCat(identity->spiffe_id, ": ", role.status().message()));
  }
  identity->role = *role;
  return identity;
}

absl::StatusOr<Identity> PeerIdentity(const grpc::ServerContextBase& context) {
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr) return Unauthenticated("no auth context");
  return PeerIdentity(*auth);
}

}  // namespace geodesic::tls
