#include "sim/frr_router.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "sim/frr_bgpd_config.h"
#include "sim/wait_until.h"

namespace geodesic::sim {
namespace {

constexpr char kBgpd[] = "/usr/lib/frr/bgpd";
constexpr char kIp[] = "/usr/sbin/ip";
constexpr int kBgpPort = 179;

std::string Config(const FrrOptions& options) {
  BgpdConfigOptions config{.hostname = "geodesic-frr",
                           // Without zebra (-Z) bgpd logs an error for every path whose next hop it
                           // cannot register; at 10,000 paths that logging is most of its work.
                           .log_level = "critical",
                           .local_as = options.local_as,
                           .router_id = options.address,
                           .stalepath_time_s = options.stalepath_time_s};
  for (const FrrNeighbor& neighbor : options.neighbors) {
    config.neighbors.push_back({.address = neighbor.address, .remote_as = neighbor.remote_as, .password = neighbor.password});
  }
  return BgpdConfigText(config);
}

absl::StatusOr<google::protobuf::Value> ParseJson(const std::string& output) {
  const size_t start = output.find('{');
  if (start == std::string::npos) return absl::InternalError(absl::StrCat("vtysh gave no JSON: ", output.substr(0, 200)));
  google::protobuf::Value value;
  auto status = google::protobuf::util::JsonStringToMessage(output.substr(start), &value);
  if (!status.ok()) return absl::InternalError(absl::StrCat("vtysh JSON: ", status.ToString()));
  return value;
}

const google::protobuf::Value* Field(const google::protobuf::Value& value, const std::string& key) {
  if (value.kind_case() != google::protobuf::Value::kStructValue) return nullptr;
  const auto& fields = value.struct_value().fields();
  auto it = fields.find(key);
  return it == fields.end() ? nullptr : &it->second;
}

bool Bool(const google::protobuf::Value& value, const std::string& key) {
  const auto* field = Field(value, key);
  return field != nullptr && field->bool_value();
}

double Number(const google::protobuf::Value& value, const std::string& key) {
  const auto* field = Field(value, key);
  return field == nullptr ? 0 : field->number_value();
}

// "LB:65001:125000000 (1.000 Gbps)" -> 125000000
double LinkBandwidth(const std::string& communities) {
  const size_t at = communities.find("LB:");
  if (at == std::string::npos) return 0;
  const size_t colon = communities.find(':', at + 3);
  if (colon == std::string::npos) return 0;
  return std::strtod(communities.c_str() + colon + 1, nullptr);
}

FrrPath ParsePath(const google::protobuf::Value& path) {
  FrrPath parsed;
  parsed.valid = Bool(path, "valid");
  parsed.multipath = Bool(path, "multipath");
  parsed.stale = Bool(path, "stale");
  if (const auto* best = Field(path, "bestpath")) {
    parsed.best = best->kind_case() == google::protobuf::Value::kStructValue ? Bool(*best, "overall") : best->bool_value();
  }
  parsed.path_id = static_cast<uint32_t>(Number(path, "addpathRxId"));
  if (const auto* extended = Field(path, "extendedCommunity")) {
    if (const auto* text = Field(*extended, "string")) parsed.bandwidth_bytes = LinkBandwidth(text->string_value());
  }
  if (const auto* hops = Field(path, "nexthops"); hops != nullptr && !hops->list_value().values().empty()) {
    if (const auto* ip = Field(hops->list_value().values(0), "ip")) parsed.next_hop = ip->string_value();
  }
  return parsed;
}

}  // namespace

absl::Status FrrAvailable() {
  for (const char* path : {kBgpd}) {
    if (access(path, X_OK) != 0) return absl::NotFoundError(absl::StrCat(path, " is missing (Debian package frr)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<FrrRouter>> FrrRouter::Start(FrrOptions options) {
  if (auto status = FrrAvailable(); !status.ok()) return status;
  std::unique_ptr<FrrRouter> router(new FrrRouter(std::move(options)));
  const std::string& dir = router->options_.work_dir;
  std::filesystem::create_directories(dir);
  const std::string config_path = dir + "/bgpd.conf";
  std::ofstream(config_path) << Config(router->options_);
  const std::string& netns = router->options_.network_namespace;
  if (router->options_.port < 0 || router->options_.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("FRR port ", router->options_.port, " is not 0..65535"));
  }
  if (router->options_.port != 0) {
    router->port_ = router->options_.port;
  } else if (netns.empty()) {
    auto port = FreePort(SOCK_STREAM, router->options_.address);
    if (!port.ok()) return port.status();
    router->port_ = *port;
  } else {
    router->port_ = kBgpPort;  // the namespace's own port space
  }
  std::vector<std::string> argv;
  if (!netns.empty()) argv = {kIp, "netns", "exec", netns};
  argv.insert(argv.end(), {kBgpd, "-f", config_path, "-i", dir + "/bgpd.pid", "-p", std::to_string(router->port_),
                           "-l", router->options_.address, "-Z", "-S", "-P", "0", "--vty_socket", dir});
  auto bgpd = ChildProcess::Spawn(std::move(argv), dir + "/bgpd.log");
  if (!bgpd.ok()) return bgpd.status();
  router->bgpd_ = *std::move(bgpd);
  const absl::Status answered = WaitUntil("bgpd to answer vtysh", std::chrono::seconds(20), [&] {
    if (!router->bgpd_->running()) return true;
    auto summary = router->Vtysh("show bgp summary json");
    return summary.ok() && summary->find('{') != std::string::npos;
  }, std::chrono::milliseconds(50));
  if (!router->bgpd_->running()) {
    return absl::UnavailableError(absl::StrCat("bgpd exited at start; see ", dir, "/bgpd.log"));
  }
  if (!answered.ok()) return absl::DeadlineExceededError(absl::StrCat(answered.message(), "; see ", dir, "/bgpd.log"));
  return router;
}

FrrRouter::~FrrRouter() {
  if (bgpd_) bgpd_->Stop(2000);
}

absl::StatusOr<std::string> FrrRouter::Vtysh(const std::string& command) const {
  auto output = vty_.Command(command);
  if (output.status().code() == absl::StatusCode::kInvalidArgument) {
    return absl::InvalidArgumentError(absl::StrCat("bgpd: ", output.status().message()));
  }
  return output;
}

absl::StatusOr<std::map<std::string, std::vector<FrrPath>>> FrrRouter::Routes(bool ipv6) const {
  auto output = Vtysh(absl::StrCat("show bgp ", ipv6 ? "ipv6" : "ipv4", " unicast json detail"));
  if (!output.ok()) return output.status();
  auto json = ParseJson(*output);
  if (!json.ok()) return json.status();
  std::map<std::string, std::vector<FrrPath>> routes;
  const auto* table = Field(*json, "routes");
  if (table == nullptr) return routes;
  for (const auto& [prefix, entry] : table->struct_value().fields()) {
    // FRR 8.4's "json detail" gives a list per prefix: a {"prefix", "version"}
    // header, then the paths (later versions: {"paths": [...]}).
    const google::protobuf::Value* paths = Field(entry, "paths");
    const auto& list = paths != nullptr ? paths->list_value() : entry.list_value();
    for (const auto& path : list.values()) {
      if (Field(path, "nexthops") == nullptr) continue;  // the header
      routes[prefix].push_back(ParsePath(path));
    }
  }
  return routes;
}

absl::StatusOr<std::vector<FrrPath>> FrrRouter::Prefix(const std::string& prefix) const {
  auto output = Vtysh(absl::StrCat("show bgp ", prefix.find(':') != std::string::npos ? "ipv6" : "ipv4",
                                   " unicast ", prefix, " json"));
  if (!output.ok()) return output.status();
  auto json = ParseJson(*output);
  if (!json.ok()) return json.status();
  std::vector<FrrPath> paths;
  if (const auto* list = Field(*json, "paths")) {
    for (const auto& path : list->list_value().values()) paths.push_back(ParsePath(path));
  }
  return paths;
}

absl::StatusOr<FrrNeighborState> FrrRouter::Neighbor(const std::string& address) const {
  auto output = Vtysh(absl::StrCat("show bgp neighbors ", address, " json"));
  if (!output.ok()) return output.status();
  auto json = ParseJson(*output);
  if (!json.ok()) return json.status();
  const auto* neighbor = Field(*json, address);
  if (neighbor == nullptr) return absl::NotFoundError(absl::StrCat("FRR has no neighbor ", address));
  FrrNeighborState state;
  if (const auto* bgp_state = Field(*neighbor, "bgpState")) state.state = bgp_state->string_value();
  if (const auto* stats = Field(*neighbor, "messageStats")) {
    state.updates_received = static_cast<uint64_t>(Number(*stats, "updatesRecv"));
  }
  if (const auto* families = Field(*neighbor, "addressFamilyInfo")) {
    for (const char* family : {"ipv4Unicast", "ipv6Unicast"}) {
      if (const auto* info = Field(*families, family)) {
        state.prefixes_received += static_cast<uint64_t>(Number(*info, "acceptedPrefixCounter"));
      }
    }
  }
  return state;
}

absl::StatusOr<FrrNextHopPaths> FrrRouter::NextHopPaths() const {
  // FRR 8.4 has no JSON for it; each cache entry starts with a line
  // " <address> valid|invalid ..., #paths <n>[, peer ...]".
  auto output = Vtysh("show bgp nexthop");
  if (!output.ok()) return output.status();
  FrrNextHopPaths paths;
  for (const absl::string_view line : absl::StrSplit(*output, '\n')) {
    const size_t count_at = line.find("#paths ");
    if (line.size() < 2 || line[0] != ' ' || line[1] == ' ' || count_at == absl::string_view::npos) continue;
    const absl::string_view address = line.substr(1, line.find(' ', 1) - 1);
    uint64_t count = 0;
    absl::string_view digits = line.substr(count_at + 7);
    digits = digits.substr(0, digits.find_first_not_of("0123456789"));
    if (!absl::SimpleAtoi(digits, &count)) {
      return absl::InternalError(absl::StrCat("bgpd's next-hop cache line \"", std::string(line), "\" has no path count"));
    }
    paths[std::string(address)] += count;
  }
  return paths;
}

}  // namespace geodesic::sim
