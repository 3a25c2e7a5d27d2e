#include "tls/internal/x509.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace geodesic::tls::internal {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

BioPtr MemBio(std::string_view data) {
  return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
}

std::string Asn1String(const ASN1_STRING* s) {
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<size_t>(ASN1_STRING_length(s)));
}

}  // namespace

std::string DrainOpenSslErrors() {
  std::vector<std::string> errors;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    errors.emplace_back(buf);
  }
  return absl::StrJoin(errors, "; ");
}

absl::StatusOr<std::vector<X509Ptr>> ParsePemCertificates(
    std::string_view pem) {
  ERR_clear_error();
  BioPtr bio = MemBio(pem);
  if (bio == nullptr)
    return absl::ResourceExhaustedError("BIO_new_mem_buf failed");
  std::vector<X509Ptr> certs;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
  }
  // Reading stops with PEM_R_NO_START_LINE at the end of the input; anything
  // else means a block that looked like a certificate did not parse.
  const unsigned long last = ERR_peek_last_error();
  if (last != 0 && !(ERR_GET_LIB(last) == ERR_LIB_PEM &&
                     ERR_GET_REASON(last) == PEM_R_NO_START_LINE)) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed PEM certificate: ", DrainOpenSslErrors()));
  }
  ERR_clear_error();
  if (certs.empty()) {
    return absl::InvalidArgumentError("no PEM certificate found");
  }
  return certs;
}

absl::StatusOr<EvpPkeyPtr> ParsePemPrivateKey(std::string_view pem) {
  ERR_clear_error();
  BioPtr bio = MemBio(pem);
  if (bio == nullptr)
    return absl::ResourceExhaustedError("BIO_new_mem_buf failed");
  EvpPkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    const std::string errors = DrainOpenSslErrors();
    return absl::InvalidArgumentError(
        absl::StrCat("no PEM private key found (encrypted keys are not "
                     "supported)",
                     errors.empty() ? "" : ": ", errors));
  }
  return key;
}

std::vector<std::string> UriSans(const X509& cert) {
  std::vector<std::string> uris;
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(&cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return uris;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type == GEN_URI) {
      uris.push_back(Asn1String(name->d.uniformResourceIdentifier));
    }
  }
  GENERAL_NAMES_free(names);
  return uris;
}

std::vector<std::string> SubjectOrganizationalUnits(const X509& cert) {
  std::vector<std::string> units;
  const X509_NAME* subject = X509_get_subject_name(&cert);
  for (int i =
           X509_NAME_get_index_by_NID(subject, NID_organizationalUnitName, -1);
       i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_organizationalUnitName, i)) {
    units.push_back(
        Asn1String(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i))));
  }
  return units;
}

absl::StatusOr<Role> RoleFromCertificate(const X509& cert) {
  const std::vector<std::string> units = SubjectOrganizationalUnits(cert);
  if (units.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "an operator certificate's subject must have exactly one OU naming "
        "its role (viewer, operator or admin); found ",
        units.size()));
  }
  return ParseRole(units.front());
}

absl::StatusOr<Identity> IdentityFromCertificate(const X509& cert) {
  const std::vector<std::string> uris = UriSans(cert);
  if (uris.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a geodesic certificate must have exactly one URI SAN; found ",
        uris.size()));
  }
  absl::StatusOr<Identity> identity = ParseSpiffeId(uris.front());
  if (!identity.ok()) return identity.status();
  if (identity->kind == Identity::Kind::kOperator) {
    absl::StatusOr<Role> role = RoleFromCertificate(cert);
    if (!role.ok()) return role.status();
    identity->role = *role;
  }
  return identity;
}

}  // namespace geodesic::tls::internal
