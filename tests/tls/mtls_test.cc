// mTLS end to end over loopback: real gRPC server and channels built with
// MakeServerCredentials / MakeChannelCredentials, PKIs made by make-pki.sh.
#include <grpc/grpc_security_constants.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/server_context.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "geodesic/v1/operator.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/wait_until.h"
#include "tests/tls/pki_testing.h"
#include "tls/credentials.h"
#include "tls/identity.h"
#include "tls/peer_identity.h"

namespace geodesic::tls {
namespace {

using std::chrono::seconds;

constexpr seconds kRefresh{1};

// Answers ListFacilities with one Facility describing the caller:
// id = its SPIFFE id, display_name = its role.
class WhoAmIService final : public geodesic::v1::Operator::Service {
 public:
  grpc::Status ListFacilities(
      grpc::ServerContext* context, const geodesic::v1::ListFacilitiesRequest*,
      geodesic::v1::ListFacilitiesResponse* response) override {
    ++calls_;
    absl::StatusOr<Identity> who = PeerIdentity(*context);
    if (!who.ok()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          std::string(who.status().message()));
    }
    geodesic::v1::Facility* facility = response->add_facilities();
    facility->set_id(who->spiffe_id);
    facility->set_display_name(std::string(RoleName(who->role)));
    return grpc::Status::OK;
  }

  int calls() const { return calls_.load(); }

 private:
  std::atomic<int> calls_{0};
};

class TestServer {
 public:
  explicit TestServer(const TlsFiles& files) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0",
                             MakeServerCredentials(files, kRefresh), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
  }
  ~TestServer() {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
  }

  bool started() const { return server_ != nullptr && port_ != 0; }
  int port() const { return port_; }
  int calls() const { return service_.calls(); }

 private:
  WhoAmIService service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

struct CallResult {
  grpc::Status status;
  std::string caller_spiffe_id;  // As the server saw us.
  std::string caller_role;
  std::string server_cert_pem;  // As we saw the server.
};

// One RPC on a brand-new connection: a fresh channel with its own subchannel
// pool, so every call does its own TLS handshake.
CallResult Call(int port, std::shared_ptr<grpc::ChannelCredentials> creds) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto channel = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                           std::move(creds), args);
  auto stub = geodesic::v1::Operator::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(5));
  geodesic::v1::ListFacilitiesResponse response;
  CallResult result;
  result.status = stub->ListFacilities(&context, {}, &response);
  if (result.status.ok() && response.facilities_size() == 1) {
    result.caller_spiffe_id = response.facilities(0).id();
    result.caller_role = response.facilities(0).display_name();
  }
  if (auto auth = context.auth_context()) {
    for (const auto& pem :
         auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME)) {
      result.server_cert_pem.assign(pem.data(), pem.size());
    }
  }
  return result;
}

class MtlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    a_ = new testing::TempDir("tls");
    b_ = new testing::TempDir("tls");
    absl::Status made = testing::RunMakePki(
        a_->path(), {"--facilities", "iad", "--replicas", "pc1", "--operators",
                     "alice:admin,bob:viewer"});
    ASSERT_TRUE(made.ok()) << made;
    made = testing::RunMakePki(b_->path(),
                               {"--facilities", "iad", "--replicas", "pc1"});
    ASSERT_TRUE(made.ok()) << made;
    made = testing::IssueCertWithoutIdentity(a_->path(), "anonymous");
    ASSERT_TRUE(made.ok()) << made;
  }
  static void TearDownTestSuite() {
    delete a_;
    delete b_;
  }

  static TlsFiles A(const std::string& base) {
    return testing::LeafFiles(a_->path(), base);
  }
  static TlsFiles B(const std::string& base) {
    return testing::LeafFiles(b_->path(), base);
  }

  static std::shared_ptr<grpc::ChannelCredentials> ClientOf(
      const TlsFiles& files,
      Identity::Kind server_kind = Identity::Kind::kPathcomp) {
    return MakeChannelCredentials(files, server_kind, kRefresh);
  }

  static inline testing::TempDir* a_ = nullptr;
  static inline testing::TempDir* b_ = nullptr;
};

TEST_F(MtlsTest, AgentIsAcceptedAndIdentified) {
  TestServer server(A("pathcomp-pc1"));
  ASSERT_TRUE(server.started());
  CallResult result = Call(server.port(), ClientOf(A("site-iad-agent")));
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  absl::StatusOr<Identity> seen = ParseSpiffeId(result.caller_spiffe_id);
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(seen->kind, Identity::Kind::kAgent);
  EXPECT_EQ(seen->facility_id, "iad");
  EXPECT_EQ(result.caller_role, "none");
  EXPECT_EQ(result.server_cert_pem,
            testing::ReadFile(a_->Join("pathcomp-pc1.crt")).value());
}

TEST_F(MtlsTest, OperatorRoleComesFromItsCertificate) {
  TestServer server(A("pathcomp-pc1"));
  ASSERT_TRUE(server.started());
  CallResult alice = Call(server.port(), ClientOf(A("operator-alice")));
  ASSERT_TRUE(alice.status.ok()) << alice.status.error_message();
  EXPECT_EQ(alice.caller_spiffe_id, "spiffe://geodesic/operator/alice");
  EXPECT_EQ(alice.caller_role, "admin");
  CallResult bob = Call(server.port(), ClientOf(A("operator-bob")));
  ASSERT_TRUE(bob.status.ok()) << bob.status.error_message();
  EXPECT_EQ(bob.caller_spiffe_id, "spiffe://geodesic/operator/bob");
  EXPECT_EQ(bob.caller_role, "viewer");
}

TEST_F(MtlsTest, ClientWithoutCertificateIsRefused) {
  TestServer server(A("pathcomp-pc1"));
  ASSERT_TRUE(server.started());
  const std::string ca = testing::ReadFile(a_->Join("ca.crt")).value();
  // Control: plain gRPC TLS with a client certificate gets through...
  grpc::SslCredentialsOptions with_cert{
      .pem_root_certs = ca,
      .pem_private_key =
          testing::ReadFile(a_->Join("site-iad-agent.key")).value(),
      .pem_cert_chain =
          testing::ReadFile(a_->Join("site-iad-agent.crt")).value()};
  CallResult control = Call(server.port(), grpc::SslCredentials(with_cert));
  ASSERT_TRUE(control.status.ok()) << control.status.error_message();
  // ...and the same without one does not.
  const int calls = server.calls();
  grpc::SslCredentialsOptions without_cert;
  without_cert.pem_root_certs = ca;
  CallResult refused = Call(server.port(), grpc::SslCredentials(without_cert));
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << refused.status.error_message();
  EXPECT_EQ(server.calls(), calls);
}

TEST_F(MtlsTest, ClientCertificateFromAnotherCaIsRefused) {
  TestServer server(A("pathcomp-pc1"));
  ASSERT_TRUE(server.started());
  // Trusts the server (CA A) but presents a certificate from CA B.
  TlsFiles files = B("site-iad-agent");
  files.ca_path = a_->Join("ca.crt");
  CallResult result = Call(server.port(), ClientOf(files));
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << result.status.error_message();
  EXPECT_EQ(server.calls(), 0);
}

TEST_F(MtlsTest, ClientCertificateWithoutIdentityIsRefused) {
  TestServer server(A("pathcomp-pc1"));
  ASSERT_TRUE(server.started());
  CallResult result = Call(server.port(), ClientOf(A("anonymous")));
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << result.status.error_message();
  EXPECT_EQ(server.calls(), 0);
}

TEST_F(MtlsTest, ClientRefusesServerOfTheWrongKind) {
  TestServer server(A("site-iad-agent"));  // Not a pathcomp identity.
  ASSERT_TRUE(server.started());
  CallResult refused = Call(server.port(), ClientOf(A("site-iad-routerd")));
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << refused.status.error_message();
  EXPECT_EQ(server.calls(), 0);
  // Control: the same server is fine for a client that expects an agent.
  CallResult accepted = Call(
      server.port(), ClientOf(A("site-iad-routerd"), Identity::Kind::kAgent));
  EXPECT_TRUE(accepted.status.ok()) << accepted.status.error_message();
}

TEST_F(MtlsTest, ClientRefusesServerFromAnotherCa) {
  TestServer server(B("pathcomp-pc1"));
  ASSERT_TRUE(server.started());
  CallResult result = Call(server.port(), ClientOf(A("site-iad-agent")));
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << result.status.error_message();
  EXPECT_EQ(server.calls(), 0);
}

TEST_F(MtlsTest, ServerPresentsReissuedCertificateWithoutRestart) {
  // A server directory under CA A where make-pki.sh reissues pathcomp-pc1.
  testing::TempDir dir{"tls"};
  ASSERT_TRUE(
      testing::CopyFileAtomically(a_->Join("ca.crt"), dir.Join("ca.crt")).ok());
  ASSERT_TRUE(
      testing::CopyFileAtomically(a_->Join("ca.key"), dir.Join("ca.key")).ok());
  ASSERT_TRUE(testing::RunMakePki(dir.path(), {"--replicas", "pc1"}).ok());
  const std::string old_pem =
      testing::ReadFile(dir.Join("pathcomp-pc1.crt")).value();

  TestServer server(testing::LeafFiles(dir.path(), "pathcomp-pc1"));
  ASSERT_TRUE(server.started());
  auto client = ClientOf(A("site-iad-agent"));
  CallResult before = Call(server.port(), client);
  ASSERT_TRUE(before.status.ok()) << before.status.error_message();
  EXPECT_EQ(before.server_cert_pem, old_pem);

  absl::Status reissued =
      testing::RunMakePki(dir.path(), {"--replicas", "pc1"});
  ASSERT_TRUE(reissued.ok()) << reissued;
  const std::string new_pem =
      testing::ReadFile(dir.Join("pathcomp-pc1.crt")).value();
  ASSERT_NE(new_pem, old_pem);

  CallResult last;
  EXPECT_EQ(sim::WaitUntil("the server to present the reissued certificate", seconds(15), [&] {
    last = Call(server.port(), client);
    return last.status.ok() && last.server_cert_pem == new_pem;
  }, std::chrono::milliseconds(100)), absl::OkStatus()) << "last call: "
      << last.status.error_message();
}

TEST_F(MtlsTest, ServerMovesToANewCaWithoutRestart) {
  // The server starts on PKI A; its files are then replaced by PKI B's.
  testing::TempDir dir{"tls"};
  const TlsFiles files = testing::LeafFiles(dir.path(), "server");
  ASSERT_TRUE(
      testing::CopyFileAtomically(a_->Join("ca.crt"), files.ca_path).ok());
  ASSERT_TRUE(
      testing::CopyFileAtomically(a_->Join("pathcomp-pc1.crt"), files.cert_path)
          .ok());
  ASSERT_TRUE(
      testing::CopyFileAtomically(a_->Join("pathcomp-pc1.key"), files.key_path)
          .ok());
  TestServer server(files);
  ASSERT_TRUE(server.started());

  auto client_a = ClientOf(A("site-iad-agent"));
  auto client_b = ClientOf(B("site-iad-agent"));
  ASSERT_TRUE(Call(server.port(), client_a).status.ok());
  ASSERT_FALSE(Call(server.port(), client_b).status.ok());

  ASSERT_TRUE(
      testing::CopyFileAtomically(b_->Join("ca.crt"), files.ca_path).ok());
  ASSERT_TRUE(
      testing::CopyFileAtomically(b_->Join("pathcomp-pc1.key"), files.key_path)
          .ok());
  ASSERT_TRUE(
      testing::CopyFileAtomically(b_->Join("pathcomp-pc1.crt"), files.cert_path)
          .ok());

  CallResult last;
  EXPECT_EQ(sim::WaitUntil("a client of the new CA to get in", seconds(15), [&] {
    last = Call(server.port(), client_b);
    return last.status.ok();
  }, std::chrono::milliseconds(100)), absl::OkStatus()) << "last call: "
      << last.status.error_message();
  EXPECT_EQ(last.caller_spiffe_id, "spiffe://geodesic/site/iad/agent");
  // The old CA is no longer trusted by the server (nor does client A trust it).
  EXPECT_EQ(Call(server.port(), client_a).status.error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace geodesic::tls
