#include "sim/local_lab.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "files/atomic_file.h"
#include "sim/make_pki.h"
#include "sim/wait_until.h"
#include "site_plan/site_plan_reader.h"

namespace geodesic::sim {
namespace {

namespace fs = std::filesystem;

// A UDP port on 127.0.0.1 that was free a moment ago.
std::string TlsBlock(const std::string& pki, const std::string& stem) {
  return absl::StrCat("tls:\n  ca: ", pki, "/ca.crt\n  cert: ", pki, "/", stem, ".crt\n  key: ",
                      pki, "/", stem, ".key\n");
}

// The entries of an agent's or a routerd's `pathcomp:` list.
std::string PathcompEntries(const std::vector<std::string>& addresses) {
  std::string list;
  for (const std::string& address : addresses) absl::StrAppend(&list, "  - address: ", address, "\n");
  return list;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LocalLab>> LocalLab::Create(LabOptions options) {
  std::unique_ptr<LocalLab> lab(new LocalLab(std::move(options)));
  auto topology = topology::LoadTopologyFile(lab->options_.topology_path);
  if (!topology.ok()) return topology.status();
  lab->topology_ = *std::move(topology);
  std::error_code error;
  fs::create_directories(lab->options_.work_dir + "/logs", error);
  if (error) return absl::UnavailableError(absl::StrCat(lab->options_.work_dir, ": ", error.message()));

  std::vector<std::string> facilities;
  for (const auto& facility : lab->topology_.facilities) facilities.push_back(facility.id());
  std::vector<std::string> replica_ids;
  for (int i = 0; i < std::max(1, lab->options_.replicas); ++i) replica_ids.push_back(lab->ReplicaId(i));
  if (auto pki = RunMakePki(lab->pki_dir(),
                            {"--facilities", absl::StrJoin(facilities, ","), "--replicas",
                             absl::StrJoin(replica_ids, ","), "--etcd", "etcd1,etcd2,etcd3", "--operators",
                             "admin:admin,ops:operator,viewer:viewer"},
                            lab->options_.source_dir);
      !pki.ok()) {
    return pki;
  }
  lab->options_.replicas = std::max(1, lab->options_.replicas);
  lab->pathcomp_addresses_.assign(lab->options_.replicas, "");
  // Every agent's probe port is in its peers' configs, so it is chosen now
  // (a free ephemeral port) and kept across restarts.
  for (const std::string& facility : facilities) {
    auto port = FreePort(SOCK_DGRAM);
    if (!port.ok()) return port.status();
    lab->probe_ports_[facility] = *port;
  }
  return lab;
}

LocalLab::~LocalLab() { StopAll(); }

std::string LocalLab::config_path(const std::string& name) const {
  std::string file = name;
  std::replace(file.begin(), file.end(), '/', '-');
  return absl::StrCat(options_.work_dir, "/", file, ".yaml");
}

tls::TlsFiles LocalLab::operator_tls(const std::string& operator_name) const {
  return {pki_dir() + "/ca.crt", pki_dir() + "/operator-" + operator_name + ".crt",
          pki_dir() + "/operator-" + operator_name + ".key"};
}

tls::TlsFiles LocalLab::agent_tls(const std::string& facility_id) const {
  return {pki_dir() + "/ca.crt", pki_dir() + "/site-" + facility_id + "-agent.crt",
          pki_dir() + "/site-" + facility_id + "-agent.key"};
}

std::string LocalLab::ReplicaId(int replica) const {
  return replica == 0 ? options_.replica_id : absl::StrCat("pc", replica + 1);
}

std::string LocalLab::ReplicaName(int replica) const {
  return replica == 0 ? "pathcomp" : "pathcomp-" + ReplicaId(replica);
}

absl::Status LocalLab::WritePathcompConfig(int replica, const std::string& listen_address) {
  const std::string& dir = options_.work_dir;
  const std::string pki = pki_dir();
  const std::string name = ReplicaName(replica);
  std::string replication;
  if (etcd_) {
    // etcd over mTLS: the members' certificates and the replica's own.
    replication = absl::StrCat("replication:\n  etcd: [", absl::StrJoin(etcd_->endpoints(), ", "),
                               "]\n  lease_ttl_s: ", options_.lease_ttl_s, "\n  tls: {ca: ", pki_dir(), "/ca.crt, cert: ",
                               pki_dir(), "/pathcomp-", ReplicaId(replica), ".crt, key: ", pki_dir(), "/pathcomp-",
                               ReplicaId(replica), ".key}\n");
  }
  const std::string pathcomp = absl::StrCat(
      "replica_id: ", ReplicaId(replica), "\nlisten: ", listen_address, "\nlisten_address_file: ", dir, "/", name,
      ".addr\nstate_dir: ", dir, "/state/", name, "\ntopology: ", fs::absolute(options_.topology_path).string(),
      "\nsolve_debounce_ms: ", options_.solve_debounce_ms, "\n", TlsBlock(pki, "pathcomp-" + ReplicaId(replica)),
      MetricsBlock(name), replication, options_.pathcomp_extra_config);
  return files::AtomicWriteFile(config_path(name), pathcomp);
  // Agent and routerd configs need pathcomp's address: they are written at their start.
}

std::string LocalLab::AdminAddressFile(const std::string& name) const {
  std::string file_name = name;
  std::replace(file_name.begin(), file_name.end(), '/', '-');
  return absl::StrCat(options_.work_dir, "/", file_name, ".admin.addr");
}

std::string LocalLab::MetricsBlock(const std::string& name) const {
  return absl::StrCat("metrics: {listen: \"127.0.0.1:0\", address_file: ", AdminAddressFile(name), "}\n");
}

absl::StatusOr<std::string> LocalLab::AdminUrl(const std::string& name) {
  ChildProcess* child = process(name);
  if (child == nullptr) return absl::NotFoundError(absl::StrCat("never started: ", name));
  std::string address;
  const absl::Status listening =
      WaitUntil(absl::StrCat(name, " to write its admin listener's address"), std::chrono::seconds(30), [&] {
        std::ifstream in(AdminAddressFile(name));
        return (in >> address && !address.empty()) || !child->running();
      });
  if (!listening.ok()) return listening;
  if (address.empty()) return absl::UnavailableError(absl::StrCat(name, " exited before its admin listener was up"));
  return "http://" + address;
}

std::string LocalLab::ServiceReportsAddressFile(const std::string& facility_id) const {
  return absl::StrCat(options_.work_dir, "/agent-", facility_id, ".reports.addr");
}

absl::StatusOr<std::string> LocalLab::ServiceReportsUrl(const std::string& facility_id) {
  const std::string name = "agent/" + facility_id;
  ChildProcess* child = process(name);
  if (child == nullptr) return absl::NotFoundError(absl::StrCat("never started: ", name));
  std::string address;
  const absl::Status listening =
      WaitUntil(absl::StrCat(name, " to write its service report endpoint's address"), std::chrono::seconds(30), [&] {
        std::ifstream in(ServiceReportsAddressFile(facility_id));
        return (in >> address && !address.empty()) || !child->running();
      });
  if (!listening.ok()) return listening;
  if (address.empty()) return absl::UnavailableError(absl::StrCat(name, " exited before its report endpoint was up"));
  return absl::StrCat("http://", address, "/v1/service-reports");
}

absl::Status LocalLab::Spawn(const std::string& name, const std::string& binary,
                             const std::string& config) {
  std::string log_name = name;
  std::replace(log_name.begin(), log_name.end(), '/', '-');
  fs::remove(AdminAddressFile(name));  // AdminUrl waits for this run's
  if (name.rfind("agent/", 0) == 0) fs::remove(ServiceReportsAddressFile(name.substr(6)));
  auto process = ChildProcess::Spawn({options_.binary_dir + "/" + binary, "--config", config},
                                     options_.work_dir + "/logs/" + log_name + ".log");
  if (!process.ok()) return process.status();
  processes_[name] = *std::move(process);
  return absl::OkStatus();
}

absl::Status LocalLab::StartPathcomp() {
  if (options_.replicas > 1 && !etcd_) {
    auto etcd = EtcdCluster::Start(options_.work_dir + "/etcd", 3, pki_dir());
    if (!etcd.ok()) return etcd.status();
    etcd_ = *std::move(etcd);
  }
  for (int replica = 0; replica < options_.replicas; ++replica) {
    if (auto status = StartReplica(replica); !status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status LocalLab::StartReplica(int replica) {
  const std::string name = ReplicaName(replica);
  const std::string address_file = absl::StrCat(options_.work_dir, "/", name, ".addr");
  fs::remove(address_file);
  const std::string& known = pathcomp_addresses_[replica];
  if (auto status = WritePathcompConfig(replica, known.empty() ? options_.pathcomp_listen_host + ":0" : known);
      !status.ok()) {
    return status;
  }
  if (auto status = Spawn(name, "bin/pathcomp", config_path(name)); !status.ok()) return status;
  ChildProcess* process = processes_[name].get();
  const absl::Status listening =
      WaitUntil(absl::StrCat(name, " to write its address"), std::chrono::seconds(30), [&] {
        std::ifstream in(address_file);
        std::string address;
        if (in >> address && !address.empty()) {
          pathcomp_addresses_[replica] = address;
          return true;
        }
        return !process->running();
      });
  if (!listening.ok() || !process->running()) {
    return absl::UnavailableError(absl::StrCat(name, " did not start; see ", process->log_path()));
  }
  return absl::OkStatus();
}

absl::Status LocalLab::WriteHealthFile(const std::string& facility_id) {
  std::string content = "links:\n";
  bool any = false;
  for (const auto& link : topology_.links) {
    if (link.src_facility_id() != facility_id) continue;
    auto forced = link_overrides_[facility_id].find(link.id());
    std::vector<std::string> fields;
    if (forced != link_overrides_[facility_id].end()) fields.push_back(forced->second);
    // Probes over loopback (or veths without netem, the netns lab) measure
    // next to nothing: the lab gives every link its fiber's round trip instead, so paths are chosen as on the real backbone.
    const bool rtt_forced = forced != link_overrides_[facility_id].end() &&
                            forced->second.find("rtt_us") != std::string::npos;
    if (options_.probe_interval_ms > 0 && !rtt_forced) fields.push_back(absl::StrCat("rtt_us: ", 2 * link.latency_us()));
    if (fields.empty()) continue;
    absl::StrAppend(&content, "  ", link.id(), ": {", absl::StrJoin(fields, ", "), "}\n");
    any = true;
  }
  if (!any) content = "links: {}\n";
  return files::AtomicWriteFile(absl::StrCat(options_.work_dir, "/health-", facility_id, ".yaml"), content);
}

absl::Status LocalLab::StartAgent(const std::string& facility_id) {
  if (pathcomp_addresses_[0].empty()) return absl::FailedPreconditionError("start pathcomp first");
  std::string links;
  std::set<std::string> probing_us;  // facilities with a link to this one
  for (const auto& link : topology_.links) {
    if (link.dst_facility_id() == facility_id) probing_us.insert(link.src_facility_id());
    if (link.src_facility_id() != facility_id) continue;
    if (options_.probe_interval_ms > 0) {
      // Probed over loopback: the RTT measured is loopback's, not the fiber's.
      absl::StrAppend(&links, "  - {id: ", link.id(), ", peer: 127.0.0.1:", probe_ports_[link.dst_facility_id()],
                      "}\n");
    } else {
      // A healthy link measures its propagation delay both ways.
      absl::StrAppend(&links, "  - {id: ", link.id(), ", state: up, rtt_us: ", 2 * link.latency_us(), "}\n");
    }
  }
  if (links.empty()) return absl::InvalidArgumentError(facility_id + " has no links");
  std::string probe;
  if (options_.probe_interval_ms > 0) {
    std::vector<std::string> accept;
    for (const std::string& peer : probing_us) accept.push_back(absl::StrCat("127.0.0.1:", probe_ports_[peer]));
    probe = absl::StrCat("probe:\n  listen: 127.0.0.1:", probe_ports_[facility_id], "\n  interval_ms: ",
                         options_.probe_interval_ms, "\n  detect_multiplier: 3\n  hold_down_ms: 200\n  realtime_priority: 10\n",
                         "  accept_from: [", absl::StrJoin(accept, ", "), "]\n");
  }
  auto config = WriteAgentConfig(facility_id, pathcomp_addresses_, "links:\n" + links, probe);
  if (!config.ok()) return config.status();
  return Spawn("agent/" + facility_id, "bin/site_agent", *config);
}

absl::StatusOr<std::string> LocalLab::WriteAgentConfig(const std::string& facility_id,
                                                       const std::vector<std::string>& pathcomp_addresses,
                                                       const std::string& links_block,
                                                       const std::string& probe_block) {
  if (links_block.empty()) return absl::InvalidArgumentError(facility_id + "'s agent needs a links: section");
  if (auto status = WriteHealthFile(facility_id); !status.ok()) return status;
  std::string fabric_health;
  for (const auto& fabric : topology_.fabrics) {
    if (!options_.fabric_health_files || fabric.facility_id() != facility_id) continue;
    if (auto status = WriteFabricFile(fabric); !status.ok()) return status;
    fabric_health = absl::StrCat("fabric_health:\n  source: ", FabricFilePath(facility_id), "\n  planes: ",
                                 fabric.planes(), "\n  rails: ", fabric.rails(), "\n");
  }
  const std::string config = absl::StrCat(
      "facility: ", facility_id, "\npathcomp:\n", PathcompEntries(pathcomp_addresses),
      "poll_interval_ms: ", options_.agent_poll_interval_ms,
      "\nreport_interval_ms: ", options_.agent_report_interval_ms, "\nhealth_file: ",
      options_.work_dir, "/health-", facility_id, ".yaml\n",
      TlsBlock(pki_dir(), "site-" + facility_id + "-agent"), MetricsBlock("agent/" + facility_id), probe_block,
      fabric_health, "routerd_socket: ", LocalSocket(facility_id), "\n",
      "service_reports: {listen: \"127.0.0.1:0\", address_file: ", ServiceReportsAddressFile(facility_id), "}\n",
      links_block);
  const std::string path = config_path("agent/" + facility_id);
  if (auto status = files::AtomicWriteFile(path, config); !status.ok()) return status;
  return path;
}

std::string LocalLab::LocalSocket(const std::string& facility_id) const {
  return absl::StrCat(options_.work_dir, "/", facility_id, "-routerd.sock");
}

std::string LocalLab::BgpNextHopV4(size_t link_index) {
  return absl::StrCat("10.255.", (link_index + 1) / 256, ".", (link_index + 1) % 256);
}

std::string LocalLab::BgpNextHopV6(size_t link_index) {
  return absl::StrCat("fd00:ffff::", absl::Hex(link_index + 1));
}

FrrRouter* LocalLab::frr(const std::string& facility_id) {
  auto it = frr_.find(facility_id);
  return it == frr_.end() ? nullptr : it->second.get();
}

absl::StatusOr<std::string> LocalLab::BgpBlock(const std::string& facility_id) {
  if (std::find(options_.bgp_facilities.begin(), options_.bgp_facilities.end(), facility_id) ==
      options_.bgp_facilities.end()) {
    return std::string();
  }
  if (!frr_.contains(facility_id)) {
    auto router = FrrRouter::Start({.work_dir = absl::StrCat(options_.work_dir, "/frr-", facility_id),
                                    .local_as = kFrrAs, .address = "127.0.0.1",
                                    .neighbors = {{.address = kRouterdBgpAddress, .remote_as = kRouterdAs,
                                                   .password = ""}},
                                    .stalepath_time_s = 360});
    if (!router.ok()) return router.status();
    frr_[facility_id] = *std::move(router);
  }
  std::string block = absl::StrCat(
      "bgp:\n  local_as: ", kRouterdAs, "\n  router_id: ", kRouterdBgpAddress,
      "\n  hold_time_s: 9\n  graceful_restart_s: 120\n  bandwidth_per_weight_mbps: ",
      options_.bgp_bandwidth_per_weight_mbps, "\n  communities: [\"65000:", 100, "\"]\n  peers:\n    - {address: 127.0.0.1, port: ",
      frr_[facility_id]->port(), ", remote_as: ", kFrrAs, ", local_address: ", kRouterdBgpAddress,
      "}\n  next_hops:\n");
  for (size_t i = 0; i < topology_.links.size(); ++i) {
    const auto& link = topology_.links[i];
    if (link.src_facility_id() != facility_id) continue;
    absl::StrAppend(&block, "    - {link: ", link.id(), ", ipv4: ", BgpNextHopV4(i), ", ipv6: \"", BgpNextHopV6(i),
                    "\"}\n");
  }
  return block;
}

absl::Status LocalLab::StartRouterd(const std::string& facility_id) {
  if (pathcomp_addresses_[0].empty()) return absl::FailedPreconditionError("start pathcomp first");
  auto bgp = BgpBlock(facility_id);
  if (!bgp.ok()) return bgp.status();
  auto config = WriteRouterdConfig(facility_id, pathcomp_addresses_, *bgp);
  if (!config.ok()) return config.status();
  return Spawn("routerd/" + facility_id, "bin/routerd", *config);
}

absl::StatusOr<std::string> LocalLab::WriteRouterdConfig(const std::string& facility_id,
                                                         const std::vector<std::string>& pathcomp_addresses,
                                                         const std::string& bgp_block,
                                                         const std::string& extra_blocks) const {
  const std::string config = absl::StrCat(
      "facility: ", facility_id, "\npathcomp:\n", PathcompEntries(pathcomp_addresses),
      "state_dir: ", options_.work_dir, "/state/routerd-", facility_id, "\nagent_socket: ",
      LocalSocket(facility_id), "\n", TlsBlock(pki_dir(), "site-" + facility_id + "-routerd"),
      MetricsBlock("routerd/" + facility_id), bgp_block, extra_blocks);
  const std::string path = config_path("routerd/" + facility_id);
  if (auto status = files::AtomicWriteFile(path, config); !status.ok()) return status;
  return path;
}

absl::Status LocalLab::StartAll() {
  if (auto status = StartPathcomp(); !status.ok()) return status;
  for (const auto& facility : topology_.facilities) {
    if (auto status = StartAgent(facility.id()); !status.ok()) return status;
    if (auto status = StartRouterd(facility.id()); !status.ok()) return status;
  }
  return absl::OkStatus();
}

void LocalLab::StopAll() {
  // Agents and routerds first, so pathcomp sees orderly disconnects.
  for (auto& [name, process] : processes_) {
    if (name.rfind("pathcomp", 0) != 0) process->Stop();
  }
  for (auto& [name, process] : processes_) {
    if (name.rfind("pathcomp", 0) == 0) process->Stop();
  }
  etcd_.reset();
  frr_.clear();
}

void LocalLab::Kill(const std::string& name, int signal_number) {
  auto it = processes_.find(name);
  if (it == processes_.end()) return;
  it->second->Signal(signal_number);
  it->second->Wait(10'000);
}

absl::Status LocalLab::Restart(const std::string& name) {
  auto it = processes_.find(name);
  if (it == processes_.end()) return absl::NotFoundError(absl::StrCat("never started: ", name));
  if (it->second->running()) return absl::FailedPreconditionError(name + " is still running");
  for (int replica = 0; replica < options_.replicas; ++replica) {
    if (name == ReplicaName(replica)) return StartReplica(replica);
  }
  const std::string binary = name.rfind("agent/", 0) == 0 ? "bin/site_agent" : "bin/routerd";
  return Spawn(name, binary, config_path(name));
}

ChildProcess* LocalLab::process(const std::string& name) {
  auto it = processes_.find(name);
  return it == processes_.end() ? nullptr : it->second.get();
}

absl::Status LocalLab::SetLinkState(const std::string& link_id, const std::string& state) {
  return SetLinkHealth(link_id, state == "up" ? "" : absl::StrCat("state: ", state));
}

absl::Status LocalLab::SetLinkHealth(const std::string& link_id, const std::string& fields) {
  for (const auto& link : topology_.links) {
    if (link.id() != link_id) continue;
    if (fields.empty()) {
      link_overrides_[link.src_facility_id()].erase(link_id);
    } else {
      link_overrides_[link.src_facility_id()][link_id] = fields;
    }
    return WriteHealthFile(link.src_facility_id());
  }
  return absl::NotFoundError(absl::StrCat("unknown link ", link_id));
}

std::string LocalLab::FabricFilePath(const std::string& facility_id) const {
  return absl::StrCat(options_.work_dir, "/fabric-", facility_id, ".yaml");
}

absl::Status LocalLab::WriteFabricFile(const v1::Fabric& fabric) {
  std::string content = "planes:\n";
  for (uint32_t plane = 0; plane < fabric.planes(); ++plane) {
    auto forced = plane_states_[fabric.facility_id()].find(plane);
    absl::StrAppend(&content, "  - {plane: ", plane, ", state: ",
                    forced == plane_states_[fabric.facility_id()].end() ? "up" : forced->second, "}\n");
  }
  return files::AtomicWriteFile(FabricFilePath(fabric.facility_id()), content);
}

absl::Status LocalLab::SetPlaneState(const std::string& facility_id, uint32_t plane, const std::string& state) {
  if (!options_.fabric_health_files) return absl::FailedPreconditionError("the lab writes no fabric health files");
  if (state != "up" && state != "degraded" && state != "down") {
    return absl::InvalidArgumentError(absl::StrCat("a plane is up, degraded or down, not ", state));
  }
  for (const auto& fabric : topology_.fabrics) {
    if (fabric.facility_id() != facility_id) continue;
    if (plane >= fabric.planes()) {
      return absl::InvalidArgumentError(absl::StrCat(facility_id, " has ", fabric.planes(), " planes, not plane ", plane));
    }
    if (state == "up") {
      plane_states_[facility_id].erase(plane);
    } else {
      plane_states_[facility_id][plane] = state;
    }
    return WriteFabricFile(fabric);
  }
  return absl::NotFoundError(absl::StrCat("facility ", facility_id, " has no fabric"));
}

std::unique_ptr<v1::Operator::Stub> LocalLab::OperatorClient(const std::string& operator_name, int replica) {
  auto channel = grpc::CreateChannel(
      pathcomp_addresses_[replica],
      tls::MakeChannelCredentials(operator_tls(operator_name), tls::Identity::Kind::kPathcomp));
  return v1::Operator::NewStub(channel);
}

std::optional<v1::SitePlan> LocalLab::InstalledPlan(const std::string& facility_id) const {
  std::ifstream in(absl::StrCat(options_.work_dir, "/state/routerd-", facility_id, "/installed-plan.pb"),
                   std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  v1::SitePlan plan;
  if (!in || !plan.ParseFromString(bytes.str()) || !site_plan::ValidateIndices(plan).ok()) return std::nullopt;
  return plan;
}

std::optional<v1::LocalRepairLog> LocalLab::LocalRepairs(const std::string& facility_id) const {
  std::ifstream in(absl::StrCat(options_.work_dir, "/state/routerd-", facility_id, "/local-repairs.pb"),
                   std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  v1::LocalRepairLog log;
  if (!in || !log.ParseFromString(bytes.str())) return std::nullopt;
  return log;
}

int LocalLab::LeaderReplica(uint64_t* epoch) {
  for (int replica = 0; replica < options_.replicas; ++replica) {
    ChildProcess* running = process(ReplicaName(replica));
    if (running == nullptr || !running->running()) continue;
    auto stub = OperatorClient("admin", replica);
    grpc::ClientContext probe_context;
    probe_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    v1::DeleteIntentRequest probe;
    probe.set_id("no-such-intent");
    v1::DeleteIntentResponse probe_response;
    if (stub->DeleteIntent(&probe_context, probe, &probe_response).error_code() != grpc::StatusCode::NOT_FOUND) {
      continue;
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    v1::GetPlanResponse response;
    if (!stub->GetPlan(&context, {}, &response).ok() || response.plan().epoch() == 0) continue;
    if (epoch != nullptr) *epoch = response.plan().epoch();
    return replica;
  }
  return -1;
}

}  // namespace geodesic::sim
