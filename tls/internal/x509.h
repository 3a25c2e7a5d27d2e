// Private to tls/: thin OpenSSL wrappers for reading PEM certificates and keys
// and for extracting a geodesic Identity from a certificate.
// Thread-safe (OpenSSL 1.1+ needs no locking setup); errors are values.
#ifndef GEODESIC_TLS_INTERNAL_X509_H_
#define GEODESIC_TLS_INTERNAL_X509_H_

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tls/identity.h"

namespace geodesic::tls::internal {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct EvpPkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyFree>;

// All certificates in a PEM blob, in order. InvalidArgument if there is none
// or one does not parse.
absl::StatusOr<std::vector<X509Ptr>> ParsePemCertificates(std::string_view pem);

// The first private key in a PEM blob (PKCS#8, SEC1 or PKCS#1).
// InvalidArgument if there is none or it does not parse.
absl::StatusOr<EvpPkeyPtr> ParsePemPrivateKey(std::string_view pem);

// The URI entries of the certificate's subjectAltName, in order.
std::vector<std::string> UriSans(const X509& cert);

// The values of the subject's OU attributes, in order.
std::vector<std::string> SubjectOrganizationalUnits(const X509& cert);

// The identity a certificate carries: exactly one URI SAN that ParseSpiffeId
// accepts, and for an operator exactly one subject OU that ParseRole accepts.
// InvalidArgument otherwise. Does not check the signature or validity dates.
absl::StatusOr<Identity> IdentityFromCertificate(const X509& cert);

// The operator role from the certificate's subject: exactly one OU naming a
// role. InvalidArgument otherwise.
absl::StatusOr<Role> RoleFromCertificate(const X509& cert);

// Drains OpenSSL's thread-local error queue into one line ("" if empty).
std::string DrainOpenSslErrors();

}  // namespace geodesic::tls::internal

#endif  // GEODESIC_TLS_INTERNAL_X509_H_
