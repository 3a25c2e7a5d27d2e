#include "sim/netns/netns_router.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/struct.pb.h"
#include "sim/frr_bgpd_config.h"
#include "sim/netns/command_json.h"
#include "sim/wait_until.h"

namespace geodesic::sim {
namespace {

constexpr char kZebra[] = "/usr/lib/frr/zebra";
constexpr char kBgpd[] = "/usr/lib/frr/bgpd";
constexpr char kFrrTmpDir[] = "/var/tmp/frr";
constexpr auto kStartTimeout = std::chrono::seconds(20);

// Routes with their next hops inline, not kernel nexthop objects: the kernel
// deletes a nexthop object when its veth goes down, and zebra (8.4) kept
// reusing the group without it after the veth came back, so a spliced fiber
// stayed out of every multipath route that had used it (netns_drill_test).
std::string ZebraConfig(const NetnsRouterOptions& options) {
  return absl::StrCat("hostname ", options.facility_id, "-zebra\n", "log stdout informational\n",
                      "no zebra nexthop kernel enable\n");
}

std::string BgpdConfig(const NetnsRouterOptions& options, const std::string& router_id) {
  // routerd's paths of a prefix come from one peer (ADD-PATH); relaxing the
  // AS-path check also keeps them multipath should peers differ.
  BgpdConfigOptions config{.hostname = options.facility_id + "-bgpd",
                           .local_as = options.local_as,
                           .router_id = router_id,
                           .stalepath_time_s = options.stalepath_time_s,
                           .multipath_relax = true};
  for (const NetnsRouterPeer& peer : options.peers) {
    config.neighbors.push_back({.address = peer.address, .remote_as = peer.remote_as});
  }
  return BgpdConfigText(config);
}

KernelNextHop ParseNextHop(const google::protobuf::Value& hop) {
  KernelNextHop parsed{.gateway = JsonText(hop, "gateway"), .device = JsonText(hop, "dev"), .weight = 1};
  if (const auto* weight = JsonField(hop, "weight")) parsed.weight = static_cast<int>(weight->number_value());
  return parsed;
}

KernelRoute ParseRoute(const google::protobuf::Value& route, const std::string& prefix) {
  KernelRoute parsed{.prefix = prefix, .protocol = JsonText(route, "protocol"), .next_hops = {}};
  if (const auto* hops = JsonField(route, "nexthops")) {
    for (const auto& hop : hops->list_value().values()) parsed.next_hops.push_back(ParseNextHop(hop));
  } else if (JsonField(route, "gateway") != nullptr) {
    parsed.next_hops.push_back(ParseNextHop(route));
  }
  return parsed;
}

// Runs `ip -j ... route show ...` in the facility's namespace: its list.
absl::StatusOr<google::protobuf::Value> ShowRoutes(const NetnsBackbone& backbone, const std::string& facility_id,
                                                   const std::vector<std::string>& command) {
  absl::StatusOr<RunResult> shown = backbone.Exec(facility_id, command);
  if (!shown.ok()) return shown.status();
  if (shown->exit_code != 0) {
    return absl::InternalError(absl::StrCat("`", absl::StrJoin(command, " "), "` in ", facility_id, " exited ",
                                            shown->exit_code, ": ", shown->output));
  }
  return ParseCommandJson(shown->output, "ip -j route show");
}

}  // namespace

absl::Status NetnsRouterAvailable() {
  for (const char* path : {kZebra, kBgpd}) {
    if (access(path, X_OK) != 0) return absl::NotFoundError(absl::StrCat(path, " is missing (Debian package frr)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<KernelRoute>> ReadKernelRoute(const NetnsBackbone& backbone,
                                                         const std::string& facility_id, const std::string& prefix) {
  const bool v6 = prefix.find(':') != std::string::npos;
  absl::StatusOr<google::protobuf::Value> routes =
      ShowRoutes(backbone, facility_id, {"/usr/sbin/ip", "-j", v6 ? "-6" : "-4", "route", "show", "exact", prefix});
  if (!routes.ok()) return routes.status();
  if (routes->list_value().values_size() == 0) return std::nullopt;
  if (routes->list_value().values_size() > 1) {
    return absl::InternalError(absl::StrCat(facility_id, " has ", routes->list_value().values_size(),
                                            " routes for ", prefix));
  }
  return ParseRoute(routes->list_value().values(0), prefix);
}

absl::StatusOr<std::map<std::string, KernelRoute>> ReadKernelRoutes(const NetnsBackbone& backbone,
                                                                  const std::string& facility_id) {
  std::map<std::string, KernelRoute> table;
  for (const char* family : {"-4", "-6"}) {
    absl::StatusOr<google::protobuf::Value> routes =
        ShowRoutes(backbone, facility_id, {"/usr/sbin/ip", "-j", family, "route", "show"});
    if (!routes.ok()) return routes.status();
    for (const google::protobuf::Value& route : routes->list_value().values()) {
      std::string prefix = JsonText(route, "dst");
      if (prefix.empty()) return absl::InternalError(absl::StrCat("a route without dst in ", facility_id));
      // `ip` prints a host route without its length.
      if (prefix != "default" && prefix.find('/') == std::string::npos) {
        absl::StrAppend(&prefix, family == std::string_view("-4") ? "/32" : "/128");
      }
      table.insert_or_assign(prefix, ParseRoute(route, prefix));
    }
  }
  return table;
}

NetnsRouter::NetnsRouter(NetnsRouterOptions options, std::string router_id)
    : options_(std::move(options)),
      router_id_(std::move(router_id)),
      zebra_vty_(options_.work_dir + "/zebra.vty"),
      bgpd_vty_(options_.work_dir + "/bgpd.vty") {}

absl::StatusOr<std::unique_ptr<NetnsRouter>> NetnsRouter::Start(const NetnsBackbone& backbone,
                                                               NetnsRouterOptions options) {
  if (absl::Status available = NetnsRouterAvailable(); !available.ok()) return available;
  absl::StatusOr<NetnsFacility> facility = backbone.Facility(options.facility_id);
  if (!facility.ok()) return facility.status();
  if (facility->host_v4.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(options.facility_id, " has no IPv4 host address for a router id"));
  }
  std::vector<std::string> session_addresses = {options.listen_address};
  for (const NetnsRouterPeer& peer : options.peers) session_addresses.push_back(peer.address);
  for (const std::string& address : session_addresses) {
    absl::StatusOr<RunResult> added =
        backbone.Exec(options.facility_id, {"/usr/sbin/ip", "addr", "replace", address + "/32", "dev", "lo"});
    if (!added.ok()) return added.status();
    if (added->exit_code != 0) {
      return absl::InvalidArgumentError(absl::StrCat("cannot add BGP session address ", address, " to ",
                                                     options.facility_id, "'s lo: ", added->output));
    }
  }
  std::error_code error;
  std::filesystem::create_directories(options.work_dir, error);
  if (error) return absl::UnavailableError(absl::StrCat(options.work_dir, ": ", error.message()));
  const std::string dir = options.work_dir;
  for (const auto& [name, text] : {std::pair{"zebra.conf", ZebraConfig(options)},
                                   std::pair{"bgpd.conf", BgpdConfig(options, facility->host_v4)}}) {
    std::ofstream out(dir + "/" + name);
    out << text;
    if (!out.flush()) return absl::UnavailableError(absl::StrCat("cannot write ", dir, "/", name));
  }
  std::unique_ptr<NetnsRouter> router(new NetnsRouter(std::move(options), facility->host_v4));
  const std::string zserv = dir + "/zserv.api";
  // -P 0: no vty over TCP; --vty_socket: the sockets in the work directory.
  // zebra has no -S (bgpd's "stay root"): -u root keeps it root, and -g
  // frrvty (Debian's vty group) passes its check that the user is in the vty
  // group; it then keeps gid 0 and only raises capabilities as it needs them.
  if (absl::Status started = router->StartDaemon(
          backbone, "zebra",
          {kZebra, "-f", dir + "/zebra.conf", "-i", dir + "/zebra.pid", "-z", zserv, "--vty_socket", dir, "-P", "0",
           "-u", "root", "-g", "frrvty"},
          router->zebra_vty_, router->zebra_);
      !started.ok()) {
    return started;
  }
  if (absl::Status started = router->StartDaemon(
          backbone, "bgpd",
          {kBgpd, "-f", dir + "/bgpd.conf", "-i", dir + "/bgpd.pid", "-z", zserv, "--vty_socket", dir, "-P", "0", "-S",
           "-p", std::to_string(kBgpPort), "-l", router->options_.listen_address},
          router->bgpd_vty_, router->bgpd_);
      !started.ok()) {
    return started;
  }
  return router;
}

absl::Status NetnsRouter::StartDaemon(const NetnsBackbone& backbone, const std::string& name,
                                      std::vector<std::string> argv, const FrrVty& vty, ChildProcessPtr& process) {
  const std::string log = absl::StrCat(options_.work_dir, "/", name, ".log");
  absl::StatusOr<ChildProcessPtr> spawned = backbone.Spawn(options_.facility_id, argv, log);
  if (!spawned.ok()) return spawned.status();
  process = *std::move(spawned);
  const absl::Status answered = WaitUntil(absl::StrCat(name, " in ", options_.facility_id, " to answer on its vty"),
                                          kStartTimeout, [&] {
                                            return !process->running() || vty.Command("show version").ok();
                                          }, std::chrono::milliseconds(50));
  if (!process->running()) return absl::UnavailableError(absl::StrCat(name, " exited at start; see ", log));
  if (!answered.ok()) return absl::DeadlineExceededError(absl::StrCat(answered.message(), "; see ", log));
  return absl::OkStatus();
}

NetnsRouter::~NetnsRouter() {
  // bgpd first: zebra then withdraws what bgpd had installed and goes last.
  for (ChildProcess* daemon : {bgpd_.get(), zebra_.get()}) {
    if (daemon == nullptr) continue;
    daemon->Stop(2000);
    // Every FRR daemon keeps its crash-log buffers in /var/tmp/frr/<name>.<pid>
    // (not movable by option) and removes the directory as it exits; zebra,
    // root without its capabilities by then, cannot (the directory is frr's).
    // An empty one is removed here; one with a crash log stays.
    std::error_code ignored;
    std::filesystem::remove(absl::StrCat(kFrrTmpDir, "/", daemon == zebra_.get() ? "zebra" : "bgpd", ".",
                                         daemon->pid()),
                            ignored);
  }
}

absl::StatusOr<std::string> NetnsRouter::PeerState(const std::string& address) const {
  absl::StatusOr<std::string> output = bgpd_vty_.Command(absl::StrCat("show bgp neighbors ", address, " json"));
  if (!output.ok()) return output.status();
  absl::StatusOr<google::protobuf::Value> json = ParseCommandJson(*output, "show bgp neighbors json");
  if (!json.ok()) return json.status();
  const auto* neighbor = JsonField(*json, address);
  if (neighbor == nullptr) return absl::NotFoundError(absl::StrCat("bgpd in ", options_.facility_id, " has no neighbor ",
                                                                   address));
  return JsonText(*neighbor, "bgpState");
}

}  // namespace geodesic::sim
