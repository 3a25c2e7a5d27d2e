// The admin listener over HTTPS with certificates of the project's PKI (made by
// the real deploy/pki/make-pki.sh), asked by a TLS client on loopback.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "daemon/admin_server.h"
#include "sim/make_pki.h"
#include "tests/support/test_dirs.h"

namespace geodesic::daemon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr std::chrono::seconds kDeadline{5};

class AdminServerTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new geodesic::testing::TempDir("admin_server_tls_test");
    const absl::Status made =
        sim::RunMakePki(pki_->path(), {"--facilities", "iad", "--replicas", "pc1", "--operators", "viewer:viewer",
                                           "--tenants", "acme"});
    ASSERT_TRUE(made.ok()) << made;
  }
  static void TearDownTestSuite() { delete pki_; }

  static std::string Pki(const std::string& name) { return pki_->Join(name); }

  static std::unique_ptr<AdminServer> StartHttps(bool require_client_cert) {
    auto server = AdminServer::Start({.listen = "127.0.0.1:0",
                                      .tls = AdminTls{.ca_path = Pki("ca.crt"),
                                                      .cert_path = Pki("pathcomp-pc1.crt"),
                                                      .key_path = Pki("pathcomp-pc1.key"),
                                                      .require_client_cert = require_client_cert}});
    EXPECT_TRUE(server.ok()) << server.status();
    if (!server.ok()) return nullptr;
    (*server)->AddRoute("/metrics", [](const HttpRequest&) { return HttpResponse{.body = "geodesic_up 1\n"}; });
    return *std::move(server);
  }

  // GET `target` over TLS, trusting the project's CA, showing `client_cert`
  // (a stem in the PKI directory, e.g. "operator-viewer") unless empty.
  // The status, or an error when the handshake fails.
  static absl::StatusOr<std::string> Get(const AdminServer& server, const std::string& target,
                                         const std::string& client_cert) {
    asio::io_context io;
    asio::ssl::context context(asio::ssl::context::tls_client);
    context.load_verify_file(Pki("ca.crt"));
    context.set_verify_mode(asio::ssl::verify_peer);
    if (!client_cert.empty()) {
      context.use_certificate_chain_file(Pki(client_cert + ".crt"));
      context.use_private_key_file(Pki(client_cert + ".key"), asio::ssl::context::pem);
    }
    beast::ssl_stream<beast::tcp_stream> stream(io, context);
    const std::string address = server.address();
    const size_t colon = address.rfind(':');
    beast::get_lowest_layer(stream).expires_after(kDeadline);
    beast::get_lowest_layer(stream).connect(tcp::endpoint(asio::ip::make_address(address.substr(0, colon)),
                                                          static_cast<uint16_t>(std::stoi(address.substr(colon + 1)))));
    beast::error_code error;
    stream.handshake(asio::ssl::stream_base::client, error);
    http::request<http::empty_body> request(http::verb::get, target, 11);
    request.set(http::field::host, address);
    if (!error) http::write(stream, request, error);
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    if (!error) http::read(stream, buffer, response, error);
    if (error) return absl::UnavailableError(error.message());
    return std::to_string(response.result_int()) + " " + response.body();
  }

  static geodesic::testing::TempDir* pki_;
};

geodesic::testing::TempDir* AdminServerTlsTest::pki_ = nullptr;

TEST_F(AdminServerTlsTest, AnswersAClientWithACertificateOfTheCa) {
  auto server = StartHttps(/*require_client_cert=*/true);
  ASSERT_NE(server, nullptr);
  EXPECT_THAT(server->url(), ::testing::StartsWith("https://127.0.0.1:"));
  EXPECT_EQ(Get(*server, "/metrics", "operator-viewer").value_or("failed"), "200 geodesic_up 1\n");
  EXPECT_EQ(Get(*server, "/healthz", "operator-viewer").value_or("failed"), "200 starting\n");
}

TEST_F(AdminServerTlsTest, RefusesAClientWithoutACertificateWhenOneIsRequired) {
  auto server = StartHttps(/*require_client_cert=*/true);
  ASSERT_NE(server, nullptr);
  EXPECT_FALSE(Get(*server, "/metrics", "").ok());
  // The listener still serves the next client.
  EXPECT_EQ(Get(*server, "/metrics", "operator-viewer").value_or("failed"), "200 geodesic_up 1\n");
}

// The console and the metrics show the whole backbone: a tenant's certificate
// (same CA) opens neither; an agent's still does.
TEST_F(AdminServerTlsTest, RefusesATenantsCertificate) {
  auto server = StartHttps(/*require_client_cert=*/true);
  ASSERT_NE(server, nullptr);
  EXPECT_FALSE(Get(*server, "/metrics", "tenant-acme").ok());
  EXPECT_EQ(Get(*server, "/metrics", "site-iad-agent").value_or("failed"), "200 geodesic_up 1\n");
}

TEST_F(AdminServerTlsTest, ServesAnyTlsClientWhenNoCertificateIsRequired) {
  auto server = StartHttps(/*require_client_cert=*/false);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(Get(*server, "/metrics", "").value_or("failed"), "200 geodesic_up 1\n");
}

TEST_F(AdminServerTlsTest, RefusesToStartWithUnreadableFiles) {
  auto server = AdminServer::Start(
      {.listen = "127.0.0.1:0",
       .tls = AdminTls{.ca_path = Pki("ca.crt"), .cert_path = Pki("missing.crt"), .key_path = Pki("pathcomp-pc1.key")}});
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), ::testing::HasSubstr("missing.crt"));
}

}  // namespace
}  // namespace geodesic::daemon
