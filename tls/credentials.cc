#include "tls/credentials.h"

#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tls/internal/identity_verifier.h"
#include "tls/internal/string_view.h"
#include "tls/internal/x509.h"

namespace geodesic::tls {
namespace {

using grpc::experimental::FileWatcherCertificateProvider;
using internal::ToAbsl;
using internal::ToStd;

// Files larger than this are not PEM credentials; refuse rather than slurp.
constexpr off_t kMaxFileBytes = 1 << 20;

absl::Status FileError(absl::StatusCode code, std::string_view what,
                       std::string_view path, std::string_view problem) {
  return absl::Status(code, absl::StrCat(ToAbsl(what), " file '", ToAbsl(path),
                                         "': ", ToAbsl(problem)));
}

absl::StatusOr<std::string> ReadSmallFile(std::string_view what,
                                          const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(what), " file path is empty"));
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return FileError(err == ENOENT   ? absl::StatusCode::kNotFound
                     : err == EACCES ? absl::StatusCode::kPermissionDenied
                                     : absl::StatusCode::kFailedPrecondition,
                     what, path, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    return FileError(absl::StatusCode::kInvalidArgument, what, path,
                     "not a regular file");
  }
  if (st.st_size > kMaxFileBytes) {
    return FileError(
        absl::StatusCode::kInvalidArgument, what, path,
        absl::StrCat("too large for a PEM file (", st.st_size, " bytes)"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return FileError(err == EACCES ? absl::StatusCode::kPermissionDenied
                                   : absl::StatusCode::kFailedPrecondition,
                     what, path,
                     absl::StrCat("cannot open: ", std::strerror(err)));
  }
  std::string data((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (in.bad()) {
    return FileError(absl::StatusCode::kFailedPrecondition, what, path,
                     "read error");
  }
  return data;
}

// Verifies `chain[0]` against the trust anchors in `cas`, using the rest of
// `chain` as untrusted intermediates. Returns OpenSSL's reason on failure.
std::optional<std::string> VerifyChain(
    const std::vector<internal::X509Ptr>& cas,
    const std::vector<internal::X509Ptr>& chain) {
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store(
      X509_STORE_new(), &X509_STORE_free);
  // sk_X509_free is a macro in OpenSSL 3; wrap it. Does not free the certs.
  auto free_stack = [](STACK_OF(X509) * s) { sk_X509_free(s); };
  std::unique_ptr<STACK_OF(X509), decltype(free_stack)> untrusted(
      sk_X509_new_null(), free_stack);
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> ctx(
      X509_STORE_CTX_new(), &X509_STORE_CTX_free);
  if (!store || !untrusted || !ctx) return "out of memory";
  for (const auto& ca : cas) {
    if (X509_STORE_add_cert(store.get(), ca.get()) != 1) {
      return absl::StrCat("cannot use CA certificate: ",
                          internal::DrainOpenSslErrors());
    }
  }
  for (size_t i = 1; i < chain.size(); ++i) {
    if (sk_X509_push(untrusted.get(), chain[i].get()) <= 0)
      return "out of memory";
  }
  if (X509_STORE_CTX_init(ctx.get(), store.get(), chain[0].get(),
                          untrusted.get()) != 1) {
    return "cannot initialise verification";
  }
  if (X509_verify_cert(ctx.get()) != 1) {
    internal::DrainOpenSslErrors();
    return X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()));
  }
  return std::nullopt;
}

unsigned int RefreshSeconds(std::chrono::seconds refresh) {
  return static_cast<unsigned int>(
      std::clamp<std::chrono::seconds::rep>(refresh.count(), 1, 86400));
}

// gRPC's file watcher GPR_ASSERTs on missing paths with an opaque message;
// fail first with one that says what to fix.
void RequirePaths(const TlsFiles& files, std::string_view caller) {
  const char* empty = files.ca_path.empty()     ? "ca_path"
                      : files.cert_path.empty() ? "cert_path"
                      : files.key_path.empty()  ? "key_path"
                                                : nullptr;
  if (empty != nullptr) {
    std::fprintf(stderr, "geodesic::tls::%.*s: TlsFiles.%s is empty\n",
                 static_cast<int>(caller.size()), caller.data(), empty);
    std::abort();
  }
}

std::shared_ptr<FileWatcherCertificateProvider> MakeProvider(
    const TlsFiles& files, std::chrono::seconds refresh) {
  return std::make_shared<FileWatcherCertificateProvider>(
      files.key_path, files.cert_path, files.ca_path, RefreshSeconds(refresh));
}

}  // namespace

absl::Status ValidateTlsFiles(const TlsFiles& files) {
  absl::StatusOr<std::string> ca_pem = ReadSmallFile("CA", files.ca_path);
  if (!ca_pem.ok()) return ca_pem.status();
  absl::StatusOr<std::string> cert_pem =
      ReadSmallFile("certificate", files.cert_path);
  if (!cert_pem.ok()) return cert_pem.status();
  absl::StatusOr<std::string> key_pem =
      ReadSmallFile("private key", files.key_path);
  if (!key_pem.ok()) return key_pem.status();

  absl::StatusOr<std::vector<internal::X509Ptr>> cas =
      internal::ParsePemCertificates(*ca_pem);
  if (!cas.ok()) {
    return FileError(absl::StatusCode::kInvalidArgument, "CA", files.ca_path,
                     ToStd(cas.status().message()));
  }
  absl::StatusOr<std::vector<internal::X509Ptr>> chain =
      internal::ParsePemCertificates(*cert_pem);
  if (!chain.ok()) {
    return FileError(absl::StatusCode::kInvalidArgument, "certificate",
                     files.cert_path, ToStd(chain.status().message()));
  }
  absl::StatusOr<internal::EvpPkeyPtr> key =
      internal::ParsePemPrivateKey(*key_pem);
  if (!key.ok()) {
    return FileError(absl::StatusCode::kInvalidArgument, "private key",
                     files.key_path, ToStd(key.status().message()));
  }

  const X509& leaf = *chain->front();
  if (std::optional<std::string> problem = VerifyChain(*cas, *chain)) {
    return FileError(absl::StatusCode::kFailedPrecondition, "certificate",
                     files.cert_path,
                     absl::StrCat("does not verify against CA file '",
                                  files.ca_path, "': ", *problem));
  }
  if (X509_check_private_key(&leaf, key->get()) != 1) {
    internal::DrainOpenSslErrors();
    return FileError(absl::StatusCode::kFailedPrecondition, "private key",
                     files.key_path,
                     absl::StrCat("does not match the certificate in '",
                                  files.cert_path, "'"));
  }
  absl::StatusOr<Identity> identity = internal::IdentityFromCertificate(leaf);
  if (!identity.ok()) {
    return FileError(absl::StatusCode::kInvalidArgument, "certificate",
                     files.cert_path, ToStd(identity.status().message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Identity> ReadCertificateIdentity(const std::string& cert_path) {
  absl::StatusOr<std::string> cert_pem = ReadSmallFile("certificate", cert_path);
  if (!cert_pem.ok()) return cert_pem.status();
  absl::StatusOr<std::vector<internal::X509Ptr>> chain =
      internal::ParsePemCertificates(*cert_pem);
  if (!chain.ok()) {
    return FileError(absl::StatusCode::kInvalidArgument, "certificate",
                     cert_path, ToStd(chain.status().message()));
  }
  absl::StatusOr<Identity> identity =
      internal::IdentityFromCertificate(*chain->front());
  if (!identity.ok()) {
    return FileError(absl::StatusCode::kInvalidArgument, "certificate",
                     cert_path, ToStd(identity.status().message()));
  }
  return identity;
}

std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(
    const TlsFiles& files, std::chrono::seconds refresh) {
  RequirePaths(files, "MakeServerCredentials");
  grpc::experimental::TlsServerCredentialsOptions options(
      MakeProvider(files, refresh));
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  options.set_cert_request_type(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.set_certificate_verifier(
      internal::MakeIdentityVerifier(std::nullopt));
  return grpc::experimental::TlsServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> MakeChannelCredentials(
    const TlsFiles& files, Identity::Kind expected_server_kind,
    std::chrono::seconds refresh) {
  RequirePaths(files, "MakeChannelCredentials");
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(MakeProvider(files, refresh));
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  options.set_verify_server_certs(true);
  // The identity verifier replaces hostname checks, per connection and per
  // call.
  options.set_certificate_verifier(
      internal::MakeIdentityVerifier(expected_server_kind));
  options.set_check_call_host(false);
  return grpc::experimental::TlsCredentials(options);
}

}  // namespace geodesic::tls
