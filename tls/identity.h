// Who is at the other end of a connection: the SPIFFE-style identities of
// DESIGN §7 and the operator roles.
//
//   spiffe://geodesic/site/<facility>/agent     a site agent
//   spiffe://geodesic/site/<facility>/routerd   a router daemon
//   spiffe://geodesic/pathcomp/<replica>        a path computation replica
//   spiffe://geodesic/operator/<name>           a human operator (role in the
//                                               certificate subject's OU)
//   spiffe://geodesic/tenant/<name>             a tenant: a customer of the
//                                               backbone who may watch its own
//                                               workloads' paths (Relay) only
//
// Pure: no I/O, no gRPC, no OpenSSL. Thread-compatible; the free functions are
// thread-safe.
#ifndef GEODESIC_TLS_IDENTITY_H_
#define GEODESIC_TLS_IDENTITY_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace geodesic::tls {

// Operator roles. Ordered, so `role >= Role::kOperator` reads "at least
// operator": admin > operator > viewer > none.
enum class Role { kNone, kViewer, kOperator, kAdmin };

// Parses "viewer", "operator" or "admin" (exact, lower case). InvalidArgument
// otherwise, including for "none": kNone is never written in a certificate.
absl::StatusOr<Role> ParseRole(std::string_view name);

// "none", "viewer", "operator" or "admin".
std::string_view RoleName(Role role);

struct Identity {
  enum class Kind { kAgent, kRouterd, kPathcomp, kOperator, kEtcd, kTenant };

  Kind kind = Kind::kAgent;
  std::string facility_id;  // kAgent, kRouterd; empty otherwise.
  std::string name;         // kPathcomp: replica id; kOperator: operator name;
                            // kEtcd: member; kTenant: tenant id.
  Role role = Role::kNone;  // kOperator only, from the certificate; else kNone.
  std::string spiffe_id;    // The full URI, as presented.

  bool operator==(const Identity&) const = default;
};

// "agent", "routerd", "pathcomp", "operator", "etcd" or "tenant".
std::string_view KindName(Identity::Kind kind);

// Parses one of the URI forms above (and spiffe://geodesic/etcd/<member>). InvalidArgument for anything else:
// another scheme or trust domain, a bad id (see IsValidId), a missing or extra
// path segment, a trailing slash, query or fragment. The returned role is
// always kNone; roles come from the certificate subject, not the URI.
absl::StatusOr<Identity> ParseSpiffeId(std::string_view uri);

// True iff `id` matches ^[a-z0-9][a-z0-9._-]{0,62}$. The rule for every entity
// id in the project (facilities, replicas, operators, nodes, links...), so ids
// can be embedded in URIs, file names and keys without escaping.
bool IsValidId(std::string_view id);

}  // namespace geodesic::tls

#endif  // GEODESIC_TLS_IDENTITY_H_
