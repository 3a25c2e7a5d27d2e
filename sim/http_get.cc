#include "sim/http_get.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "absl/strings/numbers.h"

namespace geodesic::sim {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// One request of `verb` with `body` (GET: none).
absl::StatusOr<HttpAnswer> Request(http::verb verb, const std::string& url, const std::string& body,
                                   std::chrono::milliseconds timeout) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0) return absl::InvalidArgumentError("not an http:// URL: " + url);
  const std::string rest = url.substr(kScheme.size());
  const size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  const std::string target = slash == std::string::npos ? "/" : rest.substr(slash);
  const size_t colon = authority.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(authority.substr(colon + 1), &port) || port > 65535) {
    return absl::InvalidArgumentError("no IP:PORT in " + url);
  }
  std::string host = authority.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  beast::error_code error;
  const asio::ip::address address = asio::ip::make_address(host, error);
  if (error) return absl::InvalidArgumentError("not an IP address in " + url);

  asio::io_context io;
  beast::tcp_stream stream(io);
  stream.expires_after(timeout);
  http::request<http::string_body> request(verb, target, 11);
  request.set(http::field::host, authority);
  if (verb == http::verb::post) {
    request.set(http::field::content_type, "application/json");
    request.body() = body;
    request.prepare_payload();
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  stream.async_connect(asio::ip::tcp::endpoint(address, static_cast<uint16_t>(port)), [&](beast::error_code connected) {
    if (connected) {
      error = connected;
      return;
    }
    http::async_write(stream, request, [&](beast::error_code written, size_t) {
      if (written) {
        error = written;
        return;
      }
      http::async_read(stream, buffer, parser, [&](beast::error_code read, size_t) { error = read; });
    });
  });
  io.run();
  if (error) return absl::UnavailableError(std::string(http::to_string(verb)) + " " + url + ": " + error.message());
  const auto& response = parser.get();
  return HttpAnswer{.status = response.result_int(),
                    .content_type = std::string(response[http::field::content_type]),
                    .body = response.body()};
}

}  // namespace

absl::StatusOr<HttpAnswer> HttpGet(const std::string& url, std::chrono::milliseconds timeout) {
  return Request(http::verb::get, url, "", timeout);
}

absl::StatusOr<HttpAnswer> HttpPost(const std::string& url, const std::string& body,
                                    std::chrono::milliseconds timeout) {
  return Request(http::verb::post, url, body, timeout);
}

}  // namespace geodesic::sim
