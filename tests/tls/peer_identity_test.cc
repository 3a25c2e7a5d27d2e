#include "tls/peer_identity.h"

#include <grpc/grpc_security_constants.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tls/pki_testing.h"

namespace geodesic::tls {
namespace {

using ::testing::HasSubstr;

// An AuthContext holding exactly the properties a test gives it.
class FakeAuthContext final : public grpc::AuthContext {
 public:
  explicit FakeAuthContext(bool authenticated)
      : authenticated_(authenticated) {}

  void Add(const std::string& name, const std::string& value) {
    properties_.emplace(name, value);
  }

  bool IsPeerAuthenticated() const override { return authenticated_; }
  std::vector<grpc::string_ref> GetPeerIdentity() const override {
    return FindPropertyValues(GRPC_X509_SAN_PROPERTY_NAME);
  }
  std::string GetPeerIdentityPropertyName() const override {
    return GRPC_X509_SAN_PROPERTY_NAME;
  }
  std::vector<grpc::string_ref> FindPropertyValues(
      const std::string& name) const override {
    std::vector<grpc::string_ref> values;
    auto [begin, end] = properties_.equal_range(name);
    for (auto it = begin; it != end; ++it) values.emplace_back(it->second);
    return values;
  }
  // PeerIdentity never iterates; an empty range is enough.
  grpc::AuthPropertyIterator begin() const override { return EmptyIterator(); }
  grpc::AuthPropertyIterator end() const override { return EmptyIterator(); }
  void AddProperty(const std::string& key,
                   const grpc::string_ref& value) override {
    properties_.emplace(key, std::string(value.data(), value.size()));
  }
  bool SetPeerIdentityPropertyName(const std::string&) override {
    return false;
  }

 private:
  struct EmptyIterator : grpc::AuthPropertyIterator {};

  bool authenticated_;
  std::multimap<std::string, std::string> properties_;
};

class PeerIdentityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new testing::TempDir("tls");
    absl::Status made = testing::RunMakePki(
        pki_->path(),
        {"--facilities", "iad", "--operators", "alice:admin,bob:viewer",
         "--tenants", "acme"});
    ASSERT_TRUE(made.ok()) << made;
  }
  static void TearDownTestSuite() {
    delete pki_;
    pki_ = nullptr;
  }

  static std::string Pem(const std::string& base) {
    return testing::ReadFile(pki_->Join(base + ".crt")).value();
  }

  static inline testing::TempDir* pki_ = nullptr;
};

TEST_F(PeerIdentityTest, AgentFromSpiffeIdProperty) {
  FakeAuthContext auth(true);
  auth.Add(GRPC_PEER_SPIFFE_ID_PROPERTY_NAME,
           "spiffe://geodesic/site/iad/agent");
  auth.Add(GRPC_X509_PEM_CERT_PROPERTY_NAME, Pem("site-iad-agent"));
  absl::StatusOr<Identity> who = PeerIdentity(auth);
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->kind, Identity::Kind::kAgent);
  EXPECT_EQ(who->facility_id, "iad");
  EXPECT_EQ(who->role, Role::kNone);
}

TEST_F(PeerIdentityTest, FallsBackToTheSingleUriSan) {
  FakeAuthContext auth(true);
  auth.Add(GRPC_PEER_URI_PROPERTY_NAME, "spiffe://geodesic/pathcomp/pc2");
  absl::StatusOr<Identity> who = PeerIdentity(auth);
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->kind, Identity::Kind::kPathcomp);
  EXPECT_EQ(who->name, "pc2");
}

TEST_F(PeerIdentityTest, OperatorRoleComesFromTheCertificateOu) {
  for (const auto& [name, role] :
       {std::pair{"alice", Role::kAdmin}, std::pair{"bob", Role::kViewer}}) {
    FakeAuthContext auth(true);
    auth.Add(GRPC_PEER_SPIFFE_ID_PROPERTY_NAME,
             std::string("spiffe://geodesic/operator/") + name);
    auth.Add(GRPC_X509_PEM_CERT_PROPERTY_NAME,
             Pem(std::string("operator-") + name));
    absl::StatusOr<Identity> who = PeerIdentity(auth);
    ASSERT_TRUE(who.ok()) << who.status();
    EXPECT_EQ(who->kind, Identity::Kind::kOperator);
    EXPECT_EQ(who->name, name);
    EXPECT_EQ(who->role, role) << name;
  }
}

TEST_F(PeerIdentityTest, TenantFromCertificateHasNoRole) {
  FakeAuthContext auth(true);
  auth.Add(GRPC_PEER_SPIFFE_ID_PROPERTY_NAME, "spiffe://geodesic/tenant/acme");
  auth.Add(GRPC_X509_PEM_CERT_PROPERTY_NAME, Pem("tenant-acme"));
  absl::StatusOr<Identity> who = PeerIdentity(auth);
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->kind, Identity::Kind::kTenant);
  EXPECT_EQ(who->name, "acme");
  EXPECT_EQ(who->role, Role::kNone);
}

void ExpectUnauthenticated(const FakeAuthContext& auth,
                           const std::string& why) {
  absl::StatusOr<Identity> who = PeerIdentity(auth);
  ASSERT_FALSE(who.ok());
  EXPECT_EQ(who.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(who.status().message()), HasSubstr(why));
}

TEST_F(PeerIdentityTest, UnauthenticatedPeerIsRefused) {
  FakeAuthContext auth(false);
  auth.Add(GRPC_PEER_SPIFFE_ID_PROPERTY_NAME,
           "spiffe://geodesic/site/iad/agent");
  ExpectUnauthenticated(auth, "no verified client certificate");
}

TEST_F(PeerIdentityTest, CertificateWithoutUriIsRefused) {
  FakeAuthContext auth(true);
  auth.Add(GRPC_X509_CN_PROPERTY_NAME, "site-iad-agent");
  ExpectUnauthenticated(auth, "exactly one URI SAN; has 0");
}

TEST_F(PeerIdentityTest, CertificateWithTwoUrisIsRefused) {
  FakeAuthContext auth(true);
  auth.Add(GRPC_PEER_URI_PROPERTY_NAME, "spiffe://geodesic/site/iad/agent");
  auth.Add(GRPC_PEER_URI_PROPERTY_NAME, "spiffe://geodesic/operator/alice");
  ExpectUnauthenticated(auth, "exactly one URI SAN; has 2");
}

TEST_F(PeerIdentityTest, ForeignIdentityIsRefused) {
  FakeAuthContext auth(true);
  auth.Add(GRPC_PEER_SPIFFE_ID_PROPERTY_NAME,
           "spiffe://other.org/site/iad/agent");
  ExpectUnauthenticated(auth, "invalid geodesic SPIFFE id");
}

TEST_F(PeerIdentityTest, OperatorWithoutCertificateIsRefused) {
  FakeAuthContext auth(true);
  auth.Add(GRPC_PEER_SPIFFE_ID_PROPERTY_NAME,
           "spiffe://geodesic/operator/alice");
  ExpectUnauthenticated(auth, "peer certificate is not available");
}

TEST_F(PeerIdentityTest, OperatorCertificateWithoutRoleIsRefused) {
  FakeAuthContext auth(true);
  auth.Add(GRPC_PEER_SPIFFE_ID_PROPERTY_NAME,
           "spiffe://geodesic/operator/alice");
  // The agent certificate's subject has no OU.
  auth.Add(GRPC_X509_PEM_CERT_PROPERTY_NAME, Pem("site-iad-agent"));
  ExpectUnauthenticated(auth, "exactly one OU");
}

TEST_F(PeerIdentityTest, OperatorWithGarbageCertificateIsRefused) {
  FakeAuthContext auth(true);
  auth.Add(GRPC_PEER_SPIFFE_ID_PROPERTY_NAME,
           "spiffe://geodesic/operator/alice");
  auth.Add(GRPC_X509_PEM_CERT_PROPERTY_NAME,
           "-----BEGIN CERTIFICATE-----\nAAAA\n");
  ExpectUnauthenticated(auth, "PEM");
}

}  // namespace
}  // namespace geodesic::tls
