#include "daemon/health_server.h"

#include <atomic>
#include <charconv>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "daemon/log.h"

namespace geodesic::daemon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr int kThreads = 2;

struct Endpoint {
  asio::ip::address address;
  uint16_t port = 0;
};

absl::StatusOr<Endpoint> ParseEndpoint(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return absl::InvalidArgumentError("\"" + text + "\" is not IP:PORT");
  }
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.back() != ']' || host.size() < 3) return absl::InvalidArgumentError("\"" + text + "\": unbalanced [ ]");
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return absl::InvalidArgumentError("\"" + text + "\": write an IPv6 address in brackets, [::1]:PORT");
  }
  boost::system::error_code error;
  Endpoint endpoint;
  endpoint.address = asio::ip::make_address(host, error);
  if (error) return absl::InvalidArgumentError("\"" + host + "\" is not an IP address (names are not resolved)");
  unsigned port = 0;
  const auto [end, parse_error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (parse_error != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    return absl::InvalidArgumentError("\"" + port_text + "\" is not a port from 0 to 65535");
  }
  endpoint.port = static_cast<uint16_t>(port);
  return endpoint;
}

class HealthServerImpl;

// One connection: read one request (bounded in size and time), answer, close.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, HealthServerImpl& server);
  ~Connection();
  void Start();

 private:
  void OnRead(beast::error_code error);
  void Answer(http::status status, std::string body);

  HealthServerImpl& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
  http::response<http::string_body> response_;
};

class HealthServerImpl final : public HealthServer {
 public:
  explicit HealthServerImpl(HealthServerOptions options)
      : options_(std::move(options)), acceptor_(asio::make_strand(io_)) {}

  ~HealthServerImpl() override {
    io_.stop();
    for (std::thread& thread : threads_) thread.join();
    // Then the acceptor closes, and io_'s destructor destroys the pending
    // handlers and with them the open connections (which still count down
    // open_connections_, declared before io_).
  }

  absl::Status Listen(const Endpoint& endpoint) {
    const tcp::endpoint local(endpoint.address, endpoint.port);
    beast::error_code error;
    acceptor_.open(local.protocol(), error);
    if (!error) acceptor_.set_option(asio::socket_base::reuse_address(true), error);
    if (!error) acceptor_.bind(local, error);
    if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
    if (error) {
      return absl::UnavailableError("health: cannot listen on " + options_.listen + ": " + error.message());
    }
    const tcp::endpoint bound = acceptor_.local_endpoint(error);
    const std::string host = bound.address().is_v6() ? "[" + bound.address().to_string() + "]"
                                                     : bound.address().to_string();
    address_ = host + ":" + std::to_string(bound.port());
    Accept();
    for (int i = 0; i < kThreads; ++i) threads_.emplace_back([this] { io_.run(); });
    return absl::OkStatus();
  }

  void SetChecks(HealthChecks checks) override {
    std::lock_guard lock(mu_);
    checks_ = std::move(checks);
  }
  std::string address() const override { return address_; }

  const HealthServerOptions& options() const { return options_; }
  std::atomic<size_t>& open_connections() { return open_connections_; }

  // The status and body for `target`.
  std::pair<http::status, std::string> Probe(std::string_view target) {
    HealthChecks checks;
    {
      std::lock_guard lock(mu_);
      checks = checks_;
    }
    const bool live = target == "/healthz";
    const std::function<HealthVerdict()>& check = live ? checks.live : checks.ready;
    HealthVerdict verdict = check ? check() : HealthVerdict{.ok = live, .reason = "starting"};
    return {verdict.ok ? http::status::ok : http::status::service_unavailable, verdict.reason + "\n"};
  }

 private:
  void Accept() {
    acceptor_.async_accept(asio::make_strand(io_), [this](beast::error_code error, tcp::socket socket) {
      if (error == asio::error::operation_aborted || !acceptor_.is_open()) return;
      if (!error) {
        if (open_connections_.load() >= options_.max_connections) {
          beast::error_code ignored;
          socket.close(ignored);  // too many at once: the prober retries
        } else {
          std::make_shared<Connection>(std::move(socket), *this)->Start();
        }
      }
      Accept();
    });
  }

  const HealthServerOptions options_;
  std::atomic<size_t> open_connections_{0};
  std::mutex mu_;
  HealthChecks checks_;  // guarded by mu_
  std::string address_;
  asio::io_context io_{kThreads};
  tcp::acceptor acceptor_;  // after io_, which it runs on
  std::vector<std::thread> threads_;
};

Connection::Connection(tcp::socket socket, HealthServerImpl& server)
    : server_(server), stream_(std::move(socket)), buffer_(server.options().max_request_bytes) {
  ++server_.open_connections();
  parser_.header_limit(static_cast<std::uint32_t>(server_.options().max_request_bytes));
  parser_.body_limit(server_.options().max_request_bytes);
}

Connection::~Connection() { --server_.open_connections(); }

void Connection::Start() {
  stream_.expires_after(server_.options().read_timeout);
  http::async_read(stream_, buffer_, parser_,
                   [self = shared_from_this()](beast::error_code error, size_t) { self->OnRead(error); });
}

void Connection::OnRead(beast::error_code error) {
  if (error == beast::error::timeout || error == http::error::end_of_stream || error == asio::error::eof ||
      error == asio::error::operation_aborted) {
    return;  // nothing (complete) was asked in time: just close
  }
  if (error == http::error::header_limit || error == http::error::body_limit ||
      error == http::error::buffer_overflow) {
    return Answer(http::status::request_header_fields_too_large, "request too large\n");
  }
  if (error) return Answer(http::status::bad_request, "malformed request\n");
  const auto& request = parser_.get();
  const std::string_view target(request.target().data(), request.target().size());
  if (target != "/healthz" && target != "/readyz") {
    return Answer(http::status::not_found, "unknown path; ask /healthz or /readyz\n");
  }
  if (request.method() != http::verb::get) {
    response_.set(http::field::allow, "GET");
    return Answer(http::status::method_not_allowed, "only GET\n");
  }
  auto [status, body] = server_.Probe(target);
  Answer(status, std::move(body));
}

void Connection::Answer(http::status status, std::string body) {
  response_.version(11);
  response_.result(status);
  response_.set(http::field::content_type, "text/plain; charset=utf-8");
  response_.set(http::field::cache_control, "no-store");
  response_.keep_alive(false);
  response_.body() = std::move(body);
  response_.prepare_payload();
  stream_.expires_after(server_.options().read_timeout);
  http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code, size_t) {
    beast::error_code ignored;
    self->stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  });
}

}  // namespace

absl::Status ValidateListenAddress(const std::string& text, bool allow_port_zero) {
  auto endpoint = ParseEndpoint(text);
  if (!endpoint.ok()) return endpoint.status();
  if (endpoint->port == 0 && !allow_port_zero) {
    return absl::InvalidArgumentError("port 0 is not allowed here: probes need a fixed port");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<HealthServer>> HealthServer::Start(HealthServerOptions options) {
  auto endpoint = ParseEndpoint(options.listen);
  if (!endpoint.ok()) return absl::InvalidArgumentError("health.listen: " + std::string(endpoint.status().message()));
  if (options.max_request_bytes < 256) return absl::InvalidArgumentError("health: max_request_bytes below 256");
  auto server = std::make_unique<HealthServerImpl>(std::move(options));
  if (auto status = server->Listen(*endpoint); !status.ok()) return status;
  LogInfo("health endpoint listening", {{"address", server->address()}, {"paths", "/healthz /readyz"}});
  return server;
}

absl::StatusOr<std::unique_ptr<HealthServer>> StartHealthServerIfConfigured(const std::string& listen) {
  if (listen.empty()) return std::unique_ptr<HealthServer>();
  return HealthServer::Start(HealthServerOptions{.listen = listen});
}

}  // namespace geodesic::daemon
