// mTLS credentials for every gRPC connection in Geodesic (DESIGN §7): one
// private CA, SPIFFE-style identities, certificates re-read from disk so that
// rotation needs no restart. Files are PEM as written by
// deploy/pki/make-pki.sh.
//
// Typical daemon startup:
//   TlsFiles files{.ca_path = ..., .cert_path = ..., .key_path = ...};
//   if (absl::Status s = ValidateTlsFiles(files); !s.ok()) { die(s); }
//   builder.AddListeningPort(addr, MakeServerCredentials(files), &port);
//
// Thread-safe. The returned credentials own a file-watching thread each, which
// lives as long as the credentials (and any server or channel built on them).
#ifndef GEODESIC_TLS_CREDENTIALS_H_
#define GEODESIC_TLS_CREDENTIALS_H_

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tls/identity.h"

namespace geodesic::tls {

struct TlsFiles {
  std::string ca_path;  // PEM bundle of trusted CA certificates.
  std::string
      cert_path;  // PEM leaf certificate, optionally followed by intermediates.
  std::string key_path;  // PEM private key of the leaf.
};

// Checks that the three files exist and are readable regular files; that they
// parse as PEM (CA certificates, certificate chain, unencrypted private key);
// that the certificate chains to the CA and is currently valid; that the key
// matches the certificate; and that the certificate carries exactly one
// geodesic SPIFFE identity (plus a role, for operators).
// Errors name the file and the problem: NotFound, PermissionDenied (cannot
// read), InvalidArgument (content), FailedPrecondition (chain, dates, key
// mismatch). Reads the files once; no side effects.
absl::Status ValidateTlsFiles(const TlsFiles& files);

// The identity (and operator role) the leaf certificate in `cert_path` carries,
// so a daemon can check at startup that its config and certificate agree.
// Errors name the file. Reads the file once; no side effects.
absl::StatusOr<Identity> ReadCertificateIdentity(const std::string& cert_path);

// mTLS server credentials. The server presents `cert_path`/`key_path`, requires
// every client to present a certificate that chains to `ca_path` and carries a
// geodesic identity of any kind; who may call what is decided per RPC with
// PeerIdentity (peer_identity.h). All three files are re-read every `refresh`
// (at least 1 s): new connections use the new material, established ones keep
// theirs. Until a file is readable again, new handshakes fail.
//
// Precondition: ValidateTlsFiles(files).ok() at startup. Empty paths are a
// programming error and abort with a message naming the empty field.
std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(
    const TlsFiles& files,
    std::chrono::seconds refresh = std::chrono::seconds(5));

// mTLS channel credentials. The client presents `cert_path`/`key_path`, checks
// that the server's certificate chains to `ca_path`, and - instead of matching
// the dialled host name - that it carries exactly one geodesic identity of
// kind `expected_server_kind` (e.g. kPathcomp). A mismatch fails the
// connection (RPCs get UNAVAILABLE). Reload and precondition as above.
std::shared_ptr<grpc::ChannelCredentials> MakeChannelCredentials(
    const TlsFiles& files, Identity::Kind expected_server_kind,
    std::chrono::seconds refresh = std::chrono::seconds(5));

}  // namespace geodesic::tls

#endif  // GEODESIC_TLS_CREDENTIALS_H_
