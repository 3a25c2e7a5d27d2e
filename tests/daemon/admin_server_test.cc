#include "daemon/admin_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "tests/support/test_dirs.h"

namespace geodesic::daemon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ::testing::HasSubstr;

constexpr std::chrono::seconds kDeadline{5};

struct Answer {
  unsigned status = 0;
  std::string body;
};

// Connects to `address` ("127.0.0.1:PORT") with a deadline.
beast::tcp_stream Connect(asio::io_context& io, const std::string& address) {
  const size_t colon = address.rfind(':');
  beast::tcp_stream stream(io);
  stream.expires_after(kDeadline);
  stream.connect(tcp::endpoint(asio::ip::make_address(address.substr(0, colon)),
                               static_cast<uint16_t>(std::stoi(address.substr(colon + 1)))));
  return stream;
}

// Sends `raw` as it is and reads the answer, all within the deadline.
Answer SendRaw(const std::string& address, const std::string& raw) {
  asio::io_context io;
  beast::tcp_stream stream = Connect(io, address);
  stream.expires_after(kDeadline);
  asio::write(stream, asio::buffer(raw));
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response);
  return {response.result_int(), response.body()};
}

Answer Get(const std::string& address, const std::string& target, http::verb verb = http::verb::get) {
  asio::io_context io;
  beast::tcp_stream stream = Connect(io, address);
  http::request<http::empty_body> request(verb, target, 11);
  request.set(http::field::host, address);
  stream.expires_after(kDeadline);
  http::write(stream, request);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response);
  return {response.result_int(), response.body()};
}

std::unique_ptr<AdminServer> StartOnLoopback(std::chrono::milliseconds read_timeout = std::chrono::seconds(5)) {
  auto server = AdminServer::Start({.listen = "127.0.0.1:0", .max_request_bytes = 1024, .read_timeout = read_timeout});
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

TEST(AdminServerTest, AnswersStartingUntilTheDaemonGivesItsChecks) {
  auto server = StartOnLoopback();
  ASSERT_NE(server, nullptr);
  EXPECT_THAT(server->address(), ::testing::StartsWith("127.0.0.1:"));
  EXPECT_NE(server->address(), "127.0.0.1:0");
  Answer live = Get(server->address(), "/healthz");
  EXPECT_EQ(live.status, 200u);
  EXPECT_EQ(live.body, "starting\n");
  Answer ready = Get(server->address(), "/readyz");
  EXPECT_EQ(ready.status, 503u);
  EXPECT_EQ(ready.body, "starting\n");
}

TEST(AdminServerTest, AnswersBothEndpointsFromTheChecks) {
  auto server = StartOnLoopback();
  ASSERT_NE(server, nullptr);
  std::atomic<bool> ready{false};
  server->SetChecks({.live = [] { return HealthVerdict{.ok = true, .reason = "loop ran 0.1 s ago"}; },
                     .ready = [&] {
                       return ready ? HealthVerdict{.ok = true, .reason = "leader, epoch 3"}
                                    : HealthVerdict{.ok = false, .reason = "no leader elected"};
                     }});
  Answer live = Get(server->address(), "/healthz");
  EXPECT_EQ(live.status, 200u);
  EXPECT_EQ(live.body, "loop ran 0.1 s ago\n");
  Answer not_ready = Get(server->address(), "/readyz");
  EXPECT_EQ(not_ready.status, 503u);
  EXPECT_EQ(not_ready.body, "no leader elected\n");
  ready = true;
  Answer now_ready = Get(server->address(), "/readyz");
  EXPECT_EQ(now_ready.status, 200u);
  EXPECT_EQ(now_ready.body, "leader, epoch 3\n");
}

TEST(AdminServerTest, LivenessFailsWithTheReason) {
  auto server = StartOnLoopback();
  ASSERT_NE(server, nullptr);
  Heartbeat heartbeat(Heartbeat::Clock::now() - std::chrono::seconds(60));
  server->SetChecks({.live = [&] { return heartbeat.Check("report loop", std::chrono::seconds(10)); },
                     .ready = [] { return HealthVerdict{.ok = true, .reason = "ok"}; }});
  Answer stuck = Get(server->address(), "/healthz");
  EXPECT_EQ(stuck.status, 503u);
  EXPECT_THAT(stuck.body, HasSubstr("report loop stuck: last ran 60."));
  heartbeat.Beat();
  Answer alive = Get(server->address(), "/healthz");
  EXPECT_EQ(alive.status, 200u);
  EXPECT_THAT(alive.body, HasSubstr("report loop ran 0.0 s ago"));
}

TEST(AdminServerTest, RefusesOtherPathsMethodsAndMalformedRequests) {
  auto server = StartOnLoopback();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(Get(server->address(), "/metrics").status, 404u);
  EXPECT_EQ(Get(server->address(), "/healthz/x").status, 404u);
  EXPECT_EQ(Get(server->address(), "/readyz", http::verb::post).status, 405u);
  EXPECT_EQ(SendRaw(server->address(), "NONSENSE\r\n\r\n").status, 400u);
}

TEST(AdminServerTest, ServesRoutesWithTheirDecodedQuery) {
  auto server = StartOnLoopback();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(Get(server->address(), "/echo").status, 404u);
  server->AddRoute("/echo", [](const HttpRequest& request) {
    std::string body = request.path;
    for (const auto& [key, value] : request.query) body += "|" + key + "=" + value;
    return HttpResponse{.status = 200, .content_type = "text/plain", .body = body};
  });
  server->AddRoute("/teapot", [](const HttpRequest&) { return HttpResponse{.status = 418, .body = "short\n"}; });
  EXPECT_EQ(Get(server->address(), "/echo?src=iad&dst=d%66w&note=a+b&flag&bad=%zz").body,
            "/echo|bad=%zz|dst=dfw|flag=|note=a b|src=iad");
  EXPECT_EQ(Get(server->address(), "/teapot").status, 418u);
  EXPECT_EQ(Get(server->address(), "/echo", http::verb::post).status, 405u);
  EXPECT_EQ(Get(server->address(), "/healthz?verbose=1").status, 200u);  // a query does not change the path
}

Answer Post(const std::string& address, const std::string& target, const std::string& body) {
  asio::io_context io;
  beast::tcp_stream stream = Connect(io, address);
  http::request<http::string_body> request(http::verb::post, target, 11);
  request.set(http::field::host, address);
  request.body() = body;
  request.prepare_payload();
  stream.expires_after(kDeadline);
  http::write(stream, request);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response);
  return {response.result_int(), response.body()};
}

TEST(AdminServerTest, ServesPostRoutesWithTheirBody) {
  auto server = StartOnLoopback();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(Post(server->address(), "/reports", "x").status, 404u);
  server->AddPostRoute("/reports", [](const HttpRequest& request) {
    return HttpResponse{.status = 202, .body = request.path + "|" + request.body};
  });
  const Answer posted = Post(server->address(), "/reports?a=1", "{\"n\": 1}");
  EXPECT_EQ(posted.status, 202u);
  EXPECT_EQ(posted.body, "/reports|{\"n\": 1}");
  EXPECT_EQ(Get(server->address(), "/reports").status, 405u);  // POST only
  EXPECT_EQ(Post(server->address(), "/healthz", "").status, 405u);
  EXPECT_EQ(Post(server->address(), "/reports", std::string(2048, 'x')).status, 431u);  // over max_request_bytes
}

TEST(AdminServerTest, WritesItsAddressFile) {
  const geodesic::testing::TempDir dir("admin_server_test");
  const std::string file = dir.Join("admin.addr");
  auto server = AdminServer::Start({.listen = "127.0.0.1:0", .address_file = file});
  ASSERT_TRUE(server.ok()) << server.status();
  std::ifstream in(file);
  std::string address;
  std::getline(in, address);
  EXPECT_EQ(address, (*server)->address());
  EXPECT_EQ((*server)->url(), "http://" + address);
}

TEST(AdminServerTest, RefusesARequestLargerThanTheLimit) {
  auto server = StartOnLoopback();
  ASSERT_NE(server, nullptr);
  const std::string big = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(4096, 'a') + "\r\n\r\n";
  EXPECT_EQ(SendRaw(server->address(), big).status, 431u);
  // And still answers afterwards.
  EXPECT_EQ(Get(server->address(), "/healthz").status, 200u);
}

TEST(AdminServerTest, DropsAClientThatSendsNothingAfterTheReadTimeout) {
  auto server = StartOnLoopback(std::chrono::milliseconds(200));
  ASSERT_NE(server, nullptr);
  asio::io_context io;
  beast::tcp_stream stream = Connect(io, server->address());
  asio::write(stream, asio::buffer(std::string("GET /healthz HTTP/1.1\r\n")));  // never finished
  stream.expires_after(kDeadline);  // the server must close well before this
  char byte = 0;
  beast::error_code error;
  const auto started = std::chrono::steady_clock::now();
  stream.read_some(asio::buffer(&byte, 1), error);
  EXPECT_EQ(error, asio::error::eof) << error.message();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(4));
  EXPECT_EQ(Get(server->address(), "/healthz").status, 200u);
}

TEST(AdminServerTest, ValidatesListenAddresses) {
  EXPECT_TRUE(ValidateListenAddress("127.0.0.1:7480", false).ok());
  EXPECT_TRUE(ValidateListenAddress("0.0.0.0:7480", false).ok());
  EXPECT_TRUE(ValidateListenAddress("[::1]:7480", false).ok());
  EXPECT_TRUE(ValidateListenAddress("127.0.0.1:0", true).ok());
  EXPECT_THAT(ValidateListenAddress("127.0.0.1:0", false).message(), HasSubstr("fixed port"));
  EXPECT_THAT(ValidateListenAddress("localhost:7480", false).message(), HasSubstr("not an IP address"));
  EXPECT_THAT(ValidateListenAddress("::1:7480", false).message(), HasSubstr("in brackets"));
  EXPECT_THAT(ValidateListenAddress("127.0.0.1:70000", false).message(), HasSubstr("not a port"));
  EXPECT_THAT(ValidateListenAddress("127.0.0.1", false).message(), HasSubstr("not IP:PORT"));
  EXPECT_FALSE(AdminServer::Start({.listen = "127.0.0.1:x"}).ok());
}

TEST(AdminServerTest, ReportsAPortInUse) {
  auto first = StartOnLoopback();
  ASSERT_NE(first, nullptr);
  auto second = AdminServer::Start({.listen = first->address()});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr("cannot listen on " + first->address()));
}

}  // namespace
}  // namespace geodesic::daemon
