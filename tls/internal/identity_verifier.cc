#include "tls/internal/identity_verifier.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tls/internal/string_view.h"

namespace geodesic::tls::internal {
namespace {

class IdentityVerifier final
    : public grpc::experimental::ExternalCertificateVerifier {
 public:
  explicit IdentityVerifier(std::optional<Identity::Kind> expected_kind)
      : expected_kind_(expected_kind) {}

  bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request,
              std::function<void(grpc::Status)> /*callback*/,
              grpc::Status* sync_status) override {
    *sync_status = Check(request->uri_names());
    return true;  // Always synchronous.
  }

  void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest*) override {
  }

 private:
  grpc::Status Check(const std::vector<grpc::string_ref>& uris) const {
    if (uris.size() != 1) {
      return grpc::Status(
          grpc::StatusCode::UNAUTHENTICATED,
          absl::StrCat("peer certificate must have exactly one URI SAN; has ",
                       uris.size()));
    }
    absl::StatusOr<Identity> identity =
        ParseSpiffeId(std::string_view(uris[0].data(), uris[0].size()));
    if (!identity.ok()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          std::string(identity.status().message()));
    }
    if (expected_kind_.has_value() && identity->kind != *expected_kind_) {
      return grpc::Status(
          grpc::StatusCode::UNAUTHENTICATED,
          absl::StrCat("peer ", identity->spiffe_id, " is a ",
                       ToAbsl(KindName(identity->kind)), ", expected a ",
                       ToAbsl(KindName(*expected_kind_))));
    }
    return grpc::Status::OK;
  }

  const std::optional<Identity::Kind> expected_kind_;
};

}  // namespace

std::shared_ptr<grpc::experimental::CertificateVerifier> MakeIdentityVerifier(
    std::optional<Identity::Kind> expected_kind) {
  return grpc::experimental::ExternalCertificateVerifier::Create<
      IdentityVerifier>(expected_kind);
}

}  // namespace geodesic::tls::internal
