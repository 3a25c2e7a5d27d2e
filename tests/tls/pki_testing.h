// Test-only helpers for tls/ tests: PKIs made with the real
// deploy/pki/make-pki.sh (found through $GEODESIC_SOURCE_DIR, which
// geodesic_test sets), in the tests' shared temporary directories.
#ifndef GEODESIC_TESTS_TLS_PKI_TESTING_H_
#define GEODESIC_TESTS_TLS_PKI_TESTING_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/make_pki.h"
#include "tests/support/test_dirs.h"
#include "tls/credentials.h"

namespace geodesic::tls::testing {

// The tests' one temporary directory (tests/support/test_dirs.h).
using ::geodesic::testing::TempDir;

// Runs `make-pki.sh --out out_dir args...`: the one sim::RunMakePki. On
// failure the status carries the script's exit code and output.
using ::geodesic::sim::RunMakePki;

// The files make-pki.sh writes for leaf `base` ("site-iad-agent",
// "pathcomp-pc1", "operator-alice"...) in `dir`.
TlsFiles LeafFiles(const std::string& dir, const std::string& base);

// Issues `dir/base.{crt,key}` signed by `dir/ca.{crt,key}` but with only a
// DNS SAN: a certificate from our CA that carries no geodesic identity.
absl::Status IssueCertWithoutIdentity(const std::string& dir,
                                      const std::string& base);

absl::StatusOr<std::string> ReadFile(const std::string& path);

// Writes `contents` to `path` atomically (files::AtomicWriteFile), as a
// rotation tool would.
absl::Status WriteFileAtomically(const std::string& path,
                                 const std::string& contents);

// Copies `from` over `to` atomically.
absl::Status CopyFileAtomically(const std::string& from, const std::string& to);

}  // namespace geodesic::tls::testing

#endif  // GEODESIC_TESTS_TLS_PKI_TESTING_H_
