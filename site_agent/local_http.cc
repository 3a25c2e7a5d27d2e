#include "site_agent/local_http.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace geodesic::site_agent {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using boost::asio::ip::tcp;

}  // namespace

absl::StatusOr<LocalUrl> ParseLocalUrl(const std::string& url) {
  const std::string kScheme = "http://";
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("\"", url, "\": ", why));
  };
  if (!absl::StartsWith(url, kScheme)) return bad("expected http://HOST:PORT/PATH");
  const std::string rest = url.substr(kScheme.size());
  const size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  LocalUrl parsed;
  parsed.target = slash == std::string::npos ? "/" : rest.substr(slash);
  size_t colon;
  if (absl::StartsWith(authority, "[")) {
    const size_t close = authority.find(']');
    if (close == std::string::npos) return bad("unclosed [");
    parsed.host = authority.substr(1, close - 1);
    colon = close + 1 < authority.size() && authority[close + 1] == ':' ? close + 1 : std::string::npos;
  } else {
    colon = authority.rfind(':');
    parsed.host = authority.substr(0, colon);
  }
  if (parsed.host != "127.0.0.1" && parsed.host != "::1" && parsed.host != "localhost") {
    return bad("only a local endpoint (127.0.0.1, [::1] or localhost) may be used");
  }
  uint32_t port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(authority.substr(colon + 1), &port) || port == 0 ||
      port > 65535) {
    return bad("expected a port from 1 to 65535");
  }
  parsed.port = std::to_string(port);
  for (const char c : parsed.target) {
    if (c <= ' ' || c == 0x7f) return bad("the path may not contain spaces or control characters");
  }
  return parsed;
}

absl::StatusOr<std::string> HttpGetLocal(const LocalUrl& url, std::chrono::milliseconds timeout,
                                         size_t max_body_bytes) {
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  beast::flat_buffer buffer;
  http::request<http::empty_body> request{http::verb::get, url.target, 11};
  request.set(http::field::host, url.host);
  request.set(http::field::user_agent, "geodesic-site-agent");
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_body_bytes);
  beast::error_code failure;
  const std::string where = absl::StrCat("http://", url.host, ":", url.port, url.target);

  tcp::resolver resolver(io);
  tcp::resolver::results_type endpoints = resolver.resolve(url.host, url.port, failure);
  if (failure) return absl::UnavailableError(absl::StrCat(where, ": ", failure.message()));
  stream.expires_after(timeout);  // one deadline for the whole exchange
  stream.async_connect(endpoints, [&](beast::error_code error, const tcp::endpoint&) {
    if (error) {
      failure = error;
      return;
    }
    http::async_write(stream, request, [&](beast::error_code error, size_t) {
      if (error) {
        failure = error;
        return;
      }
      http::async_read(stream, buffer, parser, [&](beast::error_code error, size_t) { failure = error; });
    });
  });
  io.run();
  if (failure == http::error::body_limit) {
    return absl::FailedPreconditionError(absl::StrCat(where, ": the answer exceeds ", max_body_bytes, " bytes"));
  }
  if (failure) return absl::UnavailableError(absl::StrCat(where, ": ", failure.message()));
  const http::response<http::string_body>& response = parser.get();
  if (response.result() != http::status::ok) {
    return absl::FailedPreconditionError(absl::StrCat(where, ": HTTP ", response.result_int()));
  }
  return response.body();
}

}  // namespace geodesic::site_agent
