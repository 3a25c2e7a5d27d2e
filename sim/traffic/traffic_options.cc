#include "sim/traffic/traffic_options.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "sim/traffic/stream_packet.h"

namespace geodesic::traffic {
namespace {

absl::Status Bad(const std::string& message) { return absl::InvalidArgumentError(message); }

// Fills `endpoint` from a bare IPv4 or IPv6 address; false when it is neither.
bool FillAddress(const std::string& ip, uint16_t port, Endpoint& endpoint) {
  auto* v4 = reinterpret_cast<sockaddr_in*>(&endpoint.address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&endpoint.address);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    endpoint.family = AF_INET;
    endpoint.length = sizeof(sockaddr_in);
    return true;
  }
  endpoint.address = {};
  if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    endpoint.family = AF_INET6;
    endpoint.length = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

template <typename T>
bool ParseNumber(const std::string& text, T& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

bool ParseDouble(const std::string& text, double& value) {
  // std::from_chars for double: GCC 11+.
  return ParseNumber(text, value) && std::isfinite(value);
}

// The flags of one subcommand: name -> takes a value.
using FlagSpec = std::map<std::string, bool>;

absl::StatusOr<std::map<std::string, std::string>> ParseFlags(const std::string& subcommand, const FlagSpec& spec,
                                                              const std::vector<std::string>& args) {
  std::map<std::string, std::string> values;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> value;
    if (size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
    }
    auto it = spec.find(flag);
    if (it == spec.end()) {
      return Bad(flag.rfind("-", 0) == 0 ? absl::StrCat(subcommand, ": unknown flag ", flag)
                                         : absl::StrCat(subcommand, ": unexpected argument \"", flag, "\""));
    }
    if (values.count(flag)) return Bad(absl::StrCat(flag, " given twice"));
    if (!it->second) {
      if (value) return Bad(absl::StrCat(flag, " takes no value"));
      values[flag] = "";
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) return Bad(absl::StrCat(flag, " needs a value"));
      value = args[++i];
    }
    values[flag] = *value;
  }
  return values;
}

absl::Status Require(const std::map<std::string, std::string>& values, std::initializer_list<const char*> flags) {
  for (const char* flag : flags) {
    if (!values.count(flag)) return Bad(absl::StrCat(flag, " is required"));
  }
  return absl::OkStatus();
}

absl::Status PositiveSeconds(const std::string& flag, const std::string& text, double& out) {
  if (!ParseDouble(text, out) || out <= 0 || out > 7 * 24 * 3600) {
    return Bad(absl::StrCat(flag, ": expected seconds > 0 (at most a week), got \"", text, "\""));
  }
  return absl::OkStatus();
}

absl::StatusOr<SendOptions> ParseSend(const std::vector<std::string>& args) {
  const FlagSpec spec = {{"--to", true},     {"--rate-mbps", true},  {"--size", true}, {"--stream", true},
                         {"--duration-s", true}, {"--bind", true}, {"--report", true},
                         {"--flows", true}};
  absl::StatusOr<std::map<std::string, std::string>> values = ParseFlags("send", spec, args);
  if (!values.ok()) return values.status();
  auto& v = *values;
  if (absl::Status s = Require(v, {"--to", "--rate-mbps", "--size", "--stream", "--duration-s"}); !s.ok()) return s;
  SendOptions options;
  absl::StatusOr<Endpoint> to = ParseEndpoint(v["--to"]);
  if (!to.ok()) return Bad(absl::StrCat("--to: ", to.status().message()));
  options.to = *to;
  if (!ParseDouble(v["--rate-mbps"], options.rate_mbps) || options.rate_mbps <= 0) {
    return Bad(absl::StrCat("--rate-mbps: expected Mbit/s > 0, got \"", v["--rate-mbps"], "\""));
  }
  if (!ParseNumber(v["--size"], options.size_bytes) || options.size_bytes < kStreamPacketHeaderBytes ||
      options.size_bytes > kStreamPacketMaxBytes) {
    return Bad(absl::StrCat("--size: expected bytes within ", kStreamPacketHeaderBytes, "..", kStreamPacketMaxBytes,
                            " (the header is ", kStreamPacketHeaderBytes, "), got \"", v["--size"], "\""));
  }
  if (!ParseNumber(v["--stream"], options.stream_id)) {
    return Bad(absl::StrCat("--stream: expected an id within 0..4294967295, got \"", v["--stream"], "\""));
  }
  if (absl::Status s = PositiveSeconds("--duration-s", v["--duration-s"], options.duration_s); !s.ok()) return s;
  if (v.count("--flows")) {
    if (!ParseNumber(v["--flows"], options.flows) || options.flows < 1 || options.flows > kMaxFlows) {
      return Bad(absl::StrCat("--flows: expected 1..", kMaxFlows, ", got \"", v["--flows"], "\""));
    }
    if (uint64_t{options.stream_id} + options.flows - 1 > UINT32_MAX) {
      return Bad(absl::StrCat("--stream ", options.stream_id, " with --flows ", options.flows,
                              ": stream ids past 4294967295"));
    }
  }
  const double interval_ns = options.size_bytes * 8.0 * 1e3 / options.rate_mbps;
  if (interval_ns < 1 || interval_ns * options.flows > UINT32_MAX) {
    return Bad(absl::StrCat("--rate-mbps ", v["--rate-mbps"], " with --size ", options.size_bytes, " and ",
                            options.flows, " flow(s): a packet every ", interval_ns * options.flows,
                            " ns per flow; must be within 1 ns..4.29 s"));
  }
  if (v.count("--bind")) {
    absl::StatusOr<Endpoint> bind = ParseAddress(v["--bind"]);
    if (!bind.ok()) return Bad(absl::StrCat("--bind: ", bind.status().message()));
    if (bind->family != options.to.family) {
      return Bad(absl::StrCat("--bind ", v["--bind"], " is not of --to ", v["--to"], "'s address family"));
    }
    options.has_bind = true;
    options.bind = *bind;
  }
  if (v.count("--report")) {
    if (v["--report"].empty()) return Bad("--report: empty path");
    options.report_path = v["--report"];
  }
  return options;
}

absl::StatusOr<ReceiveOptions> ParseReceive(const std::vector<std::string>& args) {
  const FlagSpec spec = {{"--listen", true}, {"--duration-s", true}, {"--report", true},
                         {"--late-ms", true}, {"--outage-min-ms", true}, {"--bins", false},
                         {"--rcvbuf-bytes", true}, {"--realtime-priority", true}};
  absl::StatusOr<std::map<std::string, std::string>> values = ParseFlags("receive", spec, args);
  if (!values.ok()) return values.status();
  auto& v = *values;
  if (absl::Status s = Require(v, {"--listen", "--duration-s", "--report"}); !s.ok()) return s;
  ReceiveOptions options;
  absl::StatusOr<Endpoint> listen = ParseEndpoint(v["--listen"]);
  if (!listen.ok()) return Bad(absl::StrCat("--listen: ", listen.status().message()));
  options.listen = *listen;
  if (absl::Status s = PositiveSeconds("--duration-s", v["--duration-s"], options.duration_s); !s.ok()) return s;
  if (v["--report"].empty()) return Bad("--report: empty path");
  options.report_path = v["--report"];
  if (v.count("--late-ms") && (!ParseDouble(v["--late-ms"], options.late_ms) || options.late_ms <= 0)) {
    return Bad(absl::StrCat("--late-ms: expected ms > 0, got \"", v["--late-ms"], "\""));
  }
  if (v.count("--outage-min-ms") &&
      (!ParseDouble(v["--outage-min-ms"], options.outage_min_ms) || options.outage_min_ms < 0)) {
    return Bad(absl::StrCat("--outage-min-ms: expected ms >= 0, got \"", v["--outage-min-ms"], "\""));
  }
  options.bins = v.count("--bins") > 0;
  if (v.count("--rcvbuf-bytes") &&
      (!ParseNumber(v["--rcvbuf-bytes"], options.rcvbuf_bytes) || options.rcvbuf_bytes < 4096)) {
    return Bad(absl::StrCat("--rcvbuf-bytes: expected bytes >= 4096, got \"", v["--rcvbuf-bytes"], "\""));
  }
  if (v.count("--realtime-priority") &&
      (!ParseNumber(v["--realtime-priority"], options.realtime_priority) || options.realtime_priority < 0 ||
       options.realtime_priority > 99)) {
    return Bad(absl::StrCat("--realtime-priority: expected 0..99, got \"", v["--realtime-priority"], "\""));
  }
  return options;
}

}  // namespace

absl::StatusOr<Endpoint> ParseAddress(const std::string& text) {
  std::string ip = text;
  if (ip.size() >= 2 && ip.front() == '[' && ip.back() == ']') ip = ip.substr(1, ip.size() - 2);
  Endpoint endpoint;
  if (!FillAddress(ip, 0, endpoint)) {
    return Bad(absl::StrCat("\"", text, "\" is not an IPv4 or IPv6 address"));
  }
  endpoint.text = text;
  return endpoint;
}

absl::StatusOr<Endpoint> ParseEndpoint(const std::string& text) {
  std::string ip;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find("]:");
    if (close == std::string::npos) return Bad(absl::StrCat("\"", text, "\": expected [IPv6]:PORT"));
    ip = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon) {
      return Bad(absl::StrCat("\"", text, "\": expected IPv4:PORT or [IPv6]:PORT"));
    }
    ip = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  uint32_t port = 0;
  if (!ParseNumber(port_text, port) || port == 0 || port > 65535) {
    return Bad(absl::StrCat("\"", text, "\": the port must be within 1..65535"));
  }
  Endpoint endpoint;
  if (!FillAddress(ip, static_cast<uint16_t>(port), endpoint)) {
    return Bad(absl::StrCat("\"", text, "\": \"", ip, "\" is not an IPv4 or IPv6 address"));
  }
  endpoint.text = text;
  return endpoint;
}

int64_t SendOptions::interval_ns() const {
  return static_cast<int64_t>(std::llround(size_bytes * 8.0 * 1e3 / rate_mbps));
}

absl::StatusOr<TrafficCommand> ParseTrafficCommand(const std::vector<std::string>& args) {
  if (args.empty()) return Bad("no subcommand (send or receive)");
  const std::string& subcommand = args[0];
  if (subcommand == "--help" || subcommand == "-h" || subcommand == "help") return HelpRequest{};
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") return HelpRequest{};
  }
  if (subcommand == "send") {
    absl::StatusOr<SendOptions> options = ParseSend(args);
    if (!options.ok()) return options.status();
    return *options;
  }
  if (subcommand == "receive") {
    absl::StatusOr<ReceiveOptions> options = ParseReceive(args);
    if (!options.ok()) return options.status();
    return *options;
  }
  return Bad(absl::StrCat("unknown subcommand \"", subcommand, "\" (send or receive)"));
}

}  // namespace geodesic::traffic
