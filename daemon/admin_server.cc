#include "daemon/admin_server.h"

#include <atomic>
#include <filesystem>
#include <charconv>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <openssl/x509v3.h>

#include "daemon/log.h"
#include "files/atomic_file.h"

namespace geodesic::daemon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr int kThreads = 2;

// True when `cert` has a URI SAN starting with kRefusedClientUriPrefix.
bool NamesRefusedUri(X509* cert) {
  if (cert == nullptr) return false;
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return false;
  const std::string_view refused = kRefusedClientUriPrefix;
  bool found = false;
  for (int i = 0; i < sk_GENERAL_NAME_num(names) && !found; ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type != GEN_URI) continue;
    const ASN1_IA5STRING* uri = name->d.uniformResourceIdentifier;
    const std::string_view text(reinterpret_cast<const char*>(ASN1_STRING_get0_data(uri)),
                                static_cast<size_t>(ASN1_STRING_length(uri)));
    found = text.starts_with(refused);
  }
  GENERAL_NAMES_free(names);
  return found;
}

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

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX and '+' decoded; a malformed escape is kept as it is.
std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() &&
               HexValue(text[i + 1]) >= 0 && HexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

HttpRequest ParseTarget(std::string_view target) {
  HttpRequest request;
  const size_t question = target.find('?');
  request.path = PercentDecode(target.substr(0, question));
  if (question == std::string_view::npos) return request;
  std::string_view rest = target.substr(question + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    const size_t equals = pair.find('=');
    if (!pair.empty()) {
      request.query[PercentDecode(pair.substr(0, equals))] =
          equals == std::string_view::npos ? "" : PercentDecode(pair.substr(equals + 1));
    }
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return request;
}

// The TLS context, made again from the files when one of them changes.
class TlsContextSource {
 public:
  explicit TlsContextSource(AdminTls tls) : tls_(std::move(tls)) {}

  absl::Status Load() {
    auto context = Make();
    if (!context.ok()) return context.status();
    std::lock_guard lock(mu_);
    context_ = *std::move(context);
    stamp_ = Stamp();
    return absl::OkStatus();
  }

  // The newest context that loaded; a change that does not load is logged and
  // the previous context kept.
  std::shared_ptr<asio::ssl::context> Current() {
    std::lock_guard lock(mu_);
    const std::string stamp = Stamp();
    if (stamp != stamp_) {
      stamp_ = stamp;
      auto context = Make();
      if (context.ok()) {
        context_ = *std::move(context);
        LogInfo("admin listener: TLS files reloaded", {{"cert", tls_.cert_path}});
      } else {
        LogError("admin listener: TLS files changed but do not load; keeping the previous ones",
                 {{"error", std::string(context.status().message())}});
      }
    }
    return context_;
  }

 private:
  std::string Stamp() const {
    std::string stamp;
    for (const std::string* path : {&tls_.ca_path, &tls_.cert_path, &tls_.key_path}) {
      std::error_code error;
      const auto time = std::filesystem::last_write_time(*path, error);
      stamp += error ? "-" : std::to_string(time.time_since_epoch().count());
      stamp += ';';
    }
    return stamp;
  }

  absl::StatusOr<std::shared_ptr<asio::ssl::context>> Make() const {
    auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
    boost::system::error_code error;
    context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                             asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                             asio::ssl::context::no_tlsv1_1,
                         error);
    const auto fail = [&](const std::string& what, const std::string& path) {
      return absl::InvalidArgumentError("metrics.tls: cannot load " + what + " " + path + ": " + error.message());
    };
    context->use_certificate_chain_file(tls_.cert_path, error);
    if (error) return fail("certificate", tls_.cert_path);
    context->use_private_key_file(tls_.key_path, asio::ssl::context::pem, error);
    if (error) return fail("key", tls_.key_path);
    context->load_verify_file(tls_.ca_path, error);
    if (error) return fail("CA", tls_.ca_path);
    context->set_verify_mode(tls_.require_client_cert
                                 ? asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert
                                 : asio::ssl::verify_none,
                             error);
    if (error) return fail("verify mode for", tls_.ca_path);
    if (tls_.require_client_cert) {
      context->set_verify_callback(
          [](bool preverified, asio::ssl::verify_context& verify) {
            X509_STORE_CTX* store = verify.native_handle();
            if (!preverified || X509_STORE_CTX_get_error_depth(store) != 0) return preverified;
            return !NamesRefusedUri(X509_STORE_CTX_get_current_cert(store));
          },
          error);
      if (error) return fail("verify callback for", tls_.ca_path);
    }
    return context;
  }

  const AdminTls tls_;
  std::mutex mu_;
  std::shared_ptr<asio::ssl::context> context_;  // guarded by mu_
  std::string stamp_;                            // guarded by mu_
};

class AdminServerImpl;

// One connection: (TLS handshake,) read one request (bounded in size and
// time), answer, close. `Stream` is beast::tcp_stream or its ssl_stream.
template <typename Stream>
class Connection : public std::enable_shared_from_this<Connection<Stream>> {
 public:
  Connection(Stream stream, std::shared_ptr<asio::ssl::context> context, AdminServerImpl& server);
  ~Connection();
  void Start();

 private:
  void Read();
  void OnRead(beast::error_code error);
  void Answer(http::status status, std::string content_type, std::string body);
  void Close();
  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream_); }

  AdminServerImpl& server_;
  std::shared_ptr<asio::ssl::context> context_;  // outlives the stream that refers to it
  Stream stream_;
  beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
  http::response<http::string_body> response_;
};

using PlainConnection = Connection<beast::tcp_stream>;
using TlsConnection = Connection<beast::ssl_stream<beast::tcp_stream>>;

class AdminServerImpl final : public AdminServer {
 public:
  explicit AdminServerImpl(AdminServerOptions options)
      : options_(std::move(options)), acceptor_(asio::make_strand(io_)) {}

  ~AdminServerImpl() override {
    io_.stop();
    for (std::thread& thread : threads_) thread.join();
    // Then the acceptor closes, and io_'s destructor destroys the pending
    // handlers and with them the open connections (which still count down
    // open_connections_, declared before io_).
  }

  absl::Status Listen(const Endpoint& endpoint) {
    if (options_.tls) {
      tls_ = std::make_unique<TlsContextSource>(*options_.tls);
      if (absl::Status loaded = tls_->Load(); !loaded.ok()) return loaded;
    }
    const tcp::endpoint local(endpoint.address, endpoint.port);
    beast::error_code error;
    acceptor_.open(local.protocol(), error);
    if (!error) acceptor_.set_option(asio::socket_base::reuse_address(true), error);
    if (!error) acceptor_.bind(local, error);
    if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
    if (error) {
      return absl::UnavailableError("admin listener: cannot listen on " + options_.listen + ": " + error.message());
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
  void AddRoute(const std::string& path, HttpHandler handler) override {
    std::lock_guard lock(mu_);
    routes_[path] = std::move(handler);
  }
  void AddPostRoute(const std::string& path, HttpHandler handler) override {
    std::lock_guard lock(mu_);
    post_routes_[path] = std::move(handler);
  }
  std::string address() const override { return address_; }
  std::string url() const override { return (options_.tls ? "https://" : "http://") + address_; }

  const AdminServerOptions& options() const { return options_; }
  std::atomic<size_t>& open_connections() { return open_connections_; }

  // The answer to GET `target`; nullopt: no such path.
  std::optional<HttpResponse> Handle(std::string_view target) {
    HttpRequest request = ParseTarget(target);
    if (request.path == "/healthz" || request.path == "/readyz") return Probe(request.path == "/healthz");
    HttpHandler handler;
    {
      std::lock_guard lock(mu_);
      auto it = routes_.find(request.path);
      if (it == routes_.end()) return std::nullopt;
      handler = it->second;
    }
    return handler(request);
  }

  // The answer to POST `target` with `body`; nullopt: no POST route there.
  std::optional<HttpResponse> HandlePost(std::string_view target, std::string body) {
    HttpRequest request = ParseTarget(target);
    request.body = std::move(body);
    HttpHandler handler;
    {
      std::lock_guard lock(mu_);
      auto it = post_routes_.find(request.path);
      if (it == post_routes_.end()) return std::nullopt;
      handler = it->second;
    }
    return handler(request);
  }

  // The methods `target`'s path is served with ("GET", "POST", "GET, POST"); empty: none.
  std::string Allowed(std::string_view target) {
    const std::string path = ParseTarget(target).path;
    std::lock_guard lock(mu_);
    const bool get = path == "/healthz" || path == "/readyz" || routes_.count(path) > 0;
    const bool post = post_routes_.count(path) > 0;
    return get && post ? "GET, POST" : get ? "GET" : post ? "POST" : "";
  }

 private:
  HttpResponse Probe(bool live) {
    HealthChecks checks;
    {
      std::lock_guard lock(mu_);
      checks = checks_;
    }
    const std::function<HealthVerdict()>& check = live ? checks.live : checks.ready;
    HealthVerdict verdict = check ? check() : HealthVerdict{.ok = live, .reason = "starting"};
    return {.status = verdict.ok ? 200 : 503, .body = verdict.reason + "\n"};
  }

  void Accept() {
    acceptor_.async_accept(asio::make_strand(io_), [this](beast::error_code error, tcp::socket socket) {
      if (error == asio::error::operation_aborted || !acceptor_.is_open()) return;
      if (!error) {
        if (open_connections_.load() >= options_.max_connections) {
          beast::error_code ignored;
          socket.close(ignored);  // too many at once: the client retries
        } else if (tls_) {
          std::shared_ptr<asio::ssl::context> context = tls_->Current();
          beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *context);
          std::make_shared<TlsConnection>(std::move(stream), std::move(context), *this)->Start();
        } else {
          std::make_shared<PlainConnection>(beast::tcp_stream(std::move(socket)), nullptr, *this)->Start();
        }
      }
      Accept();
    });
  }

  const AdminServerOptions options_;
  std::unique_ptr<TlsContextSource> tls_;
  std::atomic<size_t> open_connections_{0};
  std::mutex mu_;
  HealthChecks checks_;                        // guarded by mu_
  std::map<std::string, HttpHandler> routes_;  // guarded by mu_
  std::map<std::string, HttpHandler> post_routes_;  // guarded by mu_
  std::string address_;
  asio::io_context io_{kThreads};
  tcp::acceptor acceptor_;  // after io_, which it runs on
  std::vector<std::thread> threads_;
};

template <typename Stream>
Connection<Stream>::Connection(Stream stream, std::shared_ptr<asio::ssl::context> context, AdminServerImpl& server)
    : server_(server),
      context_(std::move(context)),
      stream_(std::move(stream)),
      buffer_(server.options().max_request_bytes) {
  ++server_.open_connections();
  parser_.header_limit(static_cast<std::uint32_t>(server_.options().max_request_bytes));
  parser_.body_limit(server_.options().max_request_bytes);
}

template <typename Stream>
Connection<Stream>::~Connection() {
  --server_.open_connections();
}

template <typename Stream>
void Connection<Stream>::Start() {
  Tcp().expires_after(server_.options().read_timeout);
  if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
    Read();
  } else {
    stream_.async_handshake(asio::ssl::stream_base::server,
                            [self = this->shared_from_this()](beast::error_code error) {
                              if (!error) self->Read();  // a failed handshake (no client cert...) just closes
                            });
  }
}

template <typename Stream>
void Connection<Stream>::Read() {
  http::async_read(stream_, buffer_, parser_,
                   [self = this->shared_from_this()](beast::error_code error, size_t) { self->OnRead(error); });
}

template <typename Stream>
void Connection<Stream>::OnRead(beast::error_code error) {
  if (error == beast::error::timeout || error == http::error::end_of_stream || error == asio::error::eof ||
      error == asio::error::operation_aborted || error == asio::ssl::error::stream_truncated) {
    return;  // nothing (complete) was asked in time: just close
  }
  if (error == http::error::header_limit || error == http::error::body_limit ||
      error == http::error::buffer_overflow) {
    return Answer(http::status::request_header_fields_too_large, "text/plain; charset=utf-8", "request too large\n");
  }
  if (error) return Answer(http::status::bad_request, "text/plain; charset=utf-8", "malformed request\n");
  const auto& request = parser_.get();
  const std::string_view target(request.target().data(), request.target().size());
  std::optional<HttpResponse> answer;
  if (request.method() == http::verb::get) answer = server_.Handle(target);
  if (request.method() == http::verb::post) answer = server_.HandlePost(target, request.body());
  if (!answer) {
    const std::string allowed = server_.Allowed(target);
    if (allowed.empty()) return Answer(http::status::not_found, "text/plain; charset=utf-8", "unknown path\n");
    response_.set(http::field::allow, allowed);
    return Answer(http::status::method_not_allowed, "text/plain; charset=utf-8", "only " + allowed + "\n");
  }
  Answer(static_cast<http::status>(answer->status), std::move(answer->content_type), std::move(answer->body));
}

template <typename Stream>
void Connection<Stream>::Answer(http::status status, std::string content_type, std::string body) {
  response_.version(11);
  response_.result(status);
  response_.set(http::field::content_type, content_type);
  response_.set(http::field::cache_control, "no-store");
  response_.set("X-Content-Type-Options", "nosniff");
  response_.keep_alive(false);
  response_.body() = std::move(body);
  response_.prepare_payload();
  Tcp().expires_after(server_.options().read_timeout);
  http::async_write(stream_, response_,
                    [self = this->shared_from_this()](beast::error_code, size_t) { self->Close(); });
}

template <typename Stream>
void Connection<Stream>::Close() {
  if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  } else {
    stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
      beast::error_code ignored;
      self->Tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
    });
  }
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

bool IsLoopbackListenAddress(const std::string& text) {
  auto endpoint = ParseEndpoint(text);
  return endpoint.ok() && endpoint->address.is_loopback();
}

absl::StatusOr<std::unique_ptr<AdminServer>> AdminServer::Start(AdminServerOptions options) {
  auto endpoint = ParseEndpoint(options.listen);
  if (!endpoint.ok()) return absl::InvalidArgumentError("listen: " + std::string(endpoint.status().message()));
  if (options.max_request_bytes < 256) return absl::InvalidArgumentError("admin listener: max_request_bytes below 256");
  auto server = std::make_unique<AdminServerImpl>(std::move(options));
  if (auto status = server->Listen(*endpoint); !status.ok()) return status;
  if (!server->options().address_file.empty()) {
    if (absl::Status written = files::AtomicWriteFile(server->options().address_file, server->address() + "\n");
        !written.ok()) {
      return absl::UnavailableError("admin listener: cannot write address_file: " + std::string(written.message()));
    }
  }
  LogInfo("admin listener up", {{"url", server->url()}});
  return server;
}

absl::StatusOr<DaemonListeners> DaemonListeners::Start(const std::string& health_listen,
                                                       const std::optional<AdminServerOptions>& metrics) {
  DaemonListeners listeners;
  if (!health_listen.empty()) {
    auto health = AdminServer::Start(AdminServerOptions{.listen = health_listen});
    if (!health.ok()) return absl::Status(health.status().code(), "health." + std::string(health.status().message()));
    listeners.health_ = *std::move(health);
  }
  if (metrics) {
    auto admin = AdminServer::Start(*metrics);
    if (!admin.ok()) return absl::Status(admin.status().code(), "metrics." + std::string(admin.status().message()));
    listeners.admin_ = *std::move(admin);
  }
  return listeners;
}

void DaemonListeners::SetChecks(const HealthChecks& checks) {
  if (health_) health_->SetChecks(checks);
  if (admin_) admin_->SetChecks(checks);
}

void DaemonListeners::AddRoute(const std::string& path, HttpHandler handler) {
  if (admin_) admin_->AddRoute(path, std::move(handler));
}

void DaemonListeners::Stop() {
  health_.reset();
  admin_.reset();
}

std::string DaemonListeners::admin_url() const { return admin_ ? admin_->url() : ""; }

}  // namespace geodesic::daemon
