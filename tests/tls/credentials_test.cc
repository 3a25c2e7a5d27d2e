// ValidateTlsFiles: the startup check that names the bad file and the problem.
// MakeServerCredentials / MakeChannelCredentials are exercised end to end by
// mtls_test.cc.
#include "tls/credentials.h"

#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tls/pki_testing.h"

namespace geodesic::tls {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class ValidateTlsFilesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new testing::TempDir("tls");
    other_ = new testing::TempDir("tls");
    absl::Status made = testing::RunMakePki(
        pki_->path(), {"--facilities", "iad", "--replicas", "pc1",
                       "--operators", "alice:operator", "--tenants", "acme"});
    ASSERT_TRUE(made.ok()) << made;
    made = testing::RunMakePki(other_->path(), {"--facilities", "iad"});
    ASSERT_TRUE(made.ok()) << made;
    made = testing::IssueCertWithoutIdentity(pki_->path(), "anonymous");
    ASSERT_TRUE(made.ok()) << made;
  }
  static void TearDownTestSuite() {
    delete pki_;
    delete other_;
  }

  static TlsFiles Agent() {
    return testing::LeafFiles(pki_->path(), "site-iad-agent");
  }

  static void ExpectError(const TlsFiles& files, absl::StatusCode code,
                          const std::string& names_file,
                          const std::string& problem) {
    absl::Status status = ValidateTlsFiles(files);
    EXPECT_EQ(status.code(), code) << status;
    EXPECT_THAT(std::string(status.message()),
                AllOf(HasSubstr("'" + names_file + "'"), HasSubstr(problem)));
  }

  static inline testing::TempDir* pki_ = nullptr;
  static inline testing::TempDir* other_ = nullptr;
};

TEST_F(ValidateTlsFilesTest, AcceptsEveryKindOfIssuedCertificate) {
  for (const char* base : {"site-iad-agent", "site-iad-routerd", "pathcomp-pc1",
                           "operator-alice", "tenant-acme"}) {
    absl::Status status =
        ValidateTlsFiles(testing::LeafFiles(pki_->path(), base));
    EXPECT_TRUE(status.ok()) << base << ": " << status;
  }
}

// make-pki.sh --tenants validates like the other lists: nothing is written
// when a tenant id is bad or listed twice.
TEST_F(ValidateTlsFilesTest, MakePkiRefusesBadTenantLists) {
  for (const char* tenants : {"Acme", "acme,,beta", "acme,acme", "-x", "a/b"}) {
    testing::TempDir dir("tls");
    absl::Status made = testing::RunMakePki(dir.path(), {"--tenants", tenants});
    EXPECT_FALSE(made.ok()) << tenants;
    EXPECT_THAT(std::string(made.message()), HasSubstr("tenant")) << tenants;
    EXPECT_FALSE(testing::ReadFile(dir.Join("ca.crt")).ok()) << tenants;
  }
}

TEST_F(ValidateTlsFilesTest, MissingFileIsNotFound) {
  TlsFiles files = Agent();
  files.key_path = pki_->Join("nope.key");
  ExpectError(files, absl::StatusCode::kNotFound, files.key_path,
              "No such file or directory");
}

TEST_F(ValidateTlsFilesTest, EmptyPathIsInvalid) {
  TlsFiles files = Agent();
  files.ca_path = "";
  absl::Status status = ValidateTlsFiles(files);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("CA file path is empty"));
}

TEST_F(ValidateTlsFilesTest, DirectoryIsInvalid) {
  TlsFiles files = Agent();
  files.cert_path = pki_->path();
  ExpectError(files, absl::StatusCode::kInvalidArgument, files.cert_path,
              "not a regular file");
}

TEST_F(ValidateTlsFilesTest, UnreadableFileIsPermissionDenied) {
  if (::geteuid() == 0) GTEST_SKIP() << "root can read any file";
  testing::TempDir dir{"tls"};
  const std::string key = dir.Join("agent.key");
  ASSERT_TRUE(testing::CopyFileAtomically(Agent().key_path, key).ok());
  ASSERT_EQ(::chmod(key.c_str(), 0), 0);
  TlsFiles files = Agent();
  files.key_path = key;
  ExpectError(files, absl::StatusCode::kPermissionDenied, key,
              "ermission denied");
}

TEST_F(ValidateTlsFilesTest, KeyInPlaceOfCertificateIsInvalid) {
  TlsFiles files = Agent();
  files.cert_path = files.key_path;
  ExpectError(files, absl::StatusCode::kInvalidArgument, files.cert_path,
              "no PEM certificate found");
}

TEST_F(ValidateTlsFilesTest, TruncatedCertificateIsInvalid) {
  testing::TempDir dir{"tls"};
  const std::string cert = dir.Join("agent.crt");
  std::string pem = testing::ReadFile(Agent().cert_path).value();
  ASSERT_TRUE(
      testing::WriteFileAtomically(cert, pem.substr(0, pem.size() / 2)).ok());
  TlsFiles files = Agent();
  files.cert_path = cert;
  ExpectError(files, absl::StatusCode::kInvalidArgument, cert, "malformed PEM");
}

TEST_F(ValidateTlsFilesTest, CertificateInPlaceOfKeyIsInvalid) {
  TlsFiles files = Agent();
  files.key_path = files.cert_path;
  ExpectError(files, absl::StatusCode::kInvalidArgument, files.key_path,
              "no PEM private key");
}

TEST_F(ValidateTlsFilesTest, KeyOfAnotherCertificateIsRejected) {
  TlsFiles files = Agent();
  files.key_path = pki_->Join("pathcomp-pc1.key");
  ExpectError(files, absl::StatusCode::kFailedPrecondition, files.key_path,
              "does not match the certificate");
}

TEST_F(ValidateTlsFilesTest, CertificateFromAnotherCaIsRejected) {
  TlsFiles files = testing::LeafFiles(other_->path(), "site-iad-agent");
  files.ca_path = pki_->Join("ca.crt");
  ExpectError(files, absl::StatusCode::kFailedPrecondition, files.cert_path,
              "does not verify against CA file");
}

TEST_F(ValidateTlsFilesTest, CertificateWithoutIdentityIsRejected) {
  ExpectError(testing::LeafFiles(pki_->path(), "anonymous"),
              absl::StatusCode::kInvalidArgument, pki_->Join("anonymous.crt"),
              "exactly one URI SAN");
}

TEST_F(ValidateTlsFilesTest, CaCertificateAsLeafIsRejected) {
  TlsFiles files = Agent();
  files.cert_path = pki_->Join("ca.crt");
  files.key_path = pki_->Join("ca.key");
  ExpectError(files, absl::StatusCode::kInvalidArgument, files.cert_path,
              "exactly one URI SAN");
}

}  // namespace
}  // namespace geodesic::tls
