#pragma once
// A whole Geodesic deployment on this machine, on loopback: a private PKI,
// one pathcomp (standalone, ephemeral port), and a site agent and a routerd
// for every facility of a topology, each a real process with its own config
// file and log. Used by the demo and the integration tests.
// Thread-compatible.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "geodesic/v1/operator.grpc.pb.h"
#include "geodesic/v1/plan.pb.h"
#include "sim/etcd_cluster.h"
#include "sim/frr_router.h"
#include "sim/process.h"
#include "tls/credentials.h"
#include "topology/topology.h"

namespace geodesic::sim {

struct LabOptions {
  std::string source_dir;    // the checkout (for deploy/pki/make-pki.sh)
  std::string binary_dir;    // the build tree (pathcomp/pathcomp, ...)
  std::string work_dir;      // created; holds pki/, configs, state and logs
  std::string topology_path;
  std::string replica_id = "pc1";
  // More than 1: replicated pathcomp (ids pc1, pc2, ...) electing a leader
  // through a three-member etcd cluster the lab starts; agents and routerds
  // talk to every replica. Replica 1 is "pathcomp", the others "pathcomp-pcN".
  int replicas = 1;
  int lease_ttl_s = 2;
  int agent_poll_interval_ms = 20;
  int agent_report_interval_ms = 100;  // measurement updates (state changes go at once)
  // The agents probe each other's links over loopback at this interval
  // (x3 to detect a failure); 0: no probing, the links' health is configured.
  // When probing, the health files give every link its fiber's round trip
  // (probes measure loopback's), whoever runs the agents (WriteAgentConfig).
  int probe_interval_ms = 10;
  int solve_debounce_ms = 20;
  // These facilities' routerds speak BGP to a real FRR bgpd of their own
  // (started with the routerd, on loopback); the others only log routes.
  std::vector<std::string> bgp_facilities = {};
  double bgp_bandwidth_per_weight_mbps = 1;  // link bandwidth per unit of plan weight
  // The agents of facilities with a fabric read its plane health from a file
  // the lab writes (every plane up until SetPlaneState), as from a fabric manager.
  bool fabric_health_files = false;
  // pathcomp listens on this host, an ephemeral port ("0.0.0.0": every
  // address, for daemons in other network namespaces; the netns lab).
  std::string pathcomp_listen_host = "127.0.0.1";
  // Appended to every pathcomp config as given: further top-level sections
  // (e.g. "auto_drain: {hold_s: 1}\n").
  std::string pathcomp_extra_config = "";
};

class LocalLab {
 public:
  // Loads the topology, makes the PKI (operators "admin" with role admin and
  // "viewer" with role viewer) and writes every config. Starts nothing.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LocalLab>> Create(LabOptions options);
  ~LocalLab();  // stops everything still running

  // Starts every pathcomp replica (and etcd first when replicated) and waits
  // until they listen. A restart keeps the address it had, so agents and
  // routerds find it again.
  [[nodiscard]] absl::Status StartPathcomp();
  [[nodiscard]] absl::Status StartReplica(int replica);
  // "pathcomp" for replica 0, else "pathcomp-<id>".
  std::string ReplicaName(int replica) const;
  std::string ReplicaId(int replica) const;
  int replica_count() const { return options_.replicas; }
  const std::string& replica_address(int replica) const { return pathcomp_addresses_[replica]; }
  sim::EtcdCluster* etcd() { return etcd_.get(); }
  [[nodiscard]] absl::Status StartAgent(const std::string& facility_id);
  [[nodiscard]] absl::Status StartRouterd(const std::string& facility_id);
  // Writes the routerd config StartRouterd starts a facility's routerd with,
  // except that it dials pathcomp at `pathcomp_addresses` ("host:port") and
  // has `bgp_block` (a `bgp:` section, or empty: it only logs routes) and
  // `extra_blocks` (further top-level sections, e.g. `local_repair:`,
  // appended as given); its path. For a routerd the caller runs elsewhere
  // (the netns lab).
  [[nodiscard]] absl::StatusOr<std::string> WriteRouterdConfig(const std::string& facility_id,
                                                               const std::vector<std::string>& pathcomp_addresses,
                                                               const std::string& bgp_block,
                                                               const std::string& extra_blocks = "") const;
  // Writes the agent config StartAgent starts a facility's agent with, and
  // its health file, except that it dials pathcomp at `pathcomp_addresses`
  // ("host:port") and has `links_block` (the `links:` section) and
  // `probe_block` (a `probe:` section, or empty); its path. For an agent the
  // caller runs elsewhere (the netns lab, in a facility's namespace).
  // InvalidArgument without a links section.
  [[nodiscard]] absl::StatusOr<std::string> WriteAgentConfig(const std::string& facility_id,
                                                             const std::vector<std::string>& pathcomp_addresses,
                                                             const std::string& links_block,
                                                             const std::string& probe_block);
  // pathcomp, then every agent and routerd.
  [[nodiscard]] absl::Status StartAll();
  void StopAll();
  // Sends `signal_number` to the named process and waits for it to exit.
  void Kill(const std::string& name, int signal_number);
  // Starts the named process again with the same config (after Kill).
  [[nodiscard]] absl::Status Restart(const std::string& name);

  // The process named "pathcomp", "agent/<f>" or "routerd/<f>"; nullptr if not started.
  ChildProcess* process(const std::string& name);
  // The named process's admin listener (/metrics, /healthz, /readyz, and
  // pathcomp's console), "http://127.0.0.1:PORT" on an ephemeral port; waits
  // until the (current run of the) process listens.
  [[nodiscard]] absl::StatusOr<std::string> AdminUrl(const std::string& name);

  // The facility's FRR router (bgp_facilities only; started with its routerd).
  FrrRouter* frr(const std::string& facility_id);
  // The IPv4 and IPv6 next hop routerd announces for a link (the far-end router).
  static std::string BgpNextHopV4(size_t link_index);
  static std::string BgpNextHopV6(size_t link_index);
  // routerd's address towards its FRR router.
  static constexpr char kRouterdBgpAddress[] = "127.0.0.2";
  static constexpr uint32_t kFrrAs = 65000;
  static constexpr uint32_t kRouterdAs = 4200000000;

  // Overrides one link's health through its agent's health file.
  [[nodiscard]] absl::Status SetLinkState(const std::string& link_id, const std::string& state);
  // Overrides one link's health fields, e.g. "state: up, rtt_us: 9000"
  // (health file syntax); empty removes the override.
  [[nodiscard]] absl::Status SetLinkHealth(const std::string& link_id, const std::string& fields);
  // Sets one fabric plane's state ("up", "degraded", "down") in its facility's
  // fabric health file (fabric_health_files only).
  [[nodiscard]] absl::Status SetPlaneState(const std::string& facility_id, uint32_t plane, const std::string& state);

  const topology::Topology& topology() const { return topology_; }
  const std::string& pathcomp_address() const { return pathcomp_addresses_[0]; }
  const std::string& work_dir() const { return options_.work_dir; }
  std::string pki_dir() const { return options_.work_dir + "/pki"; }
  std::string config_path(const std::string& name) const;
  // Where a facility's agent sends its link events to its routerd.
  std::string LocalSocket(const std::string& facility_id) const;
  tls::TlsFiles operator_tls(const std::string& operator_name) const;
  tls::TlsFiles agent_tls(const std::string& facility_id) const;

  // The plan a facility's routerd has installed (its state file); nullopt before any.
  std::optional<v1::SitePlan> InstalledPlan(const std::string& facility_id) const;
  // The local repairs a facility's routerd has recorded since it started
  // (routerd/local_repair_log.h); nullopt before the first.
  std::optional<v1::LocalRepairLog> LocalRepairs(const std::string& facility_id) const;
  // The replica that leads, or -1: the running one that would accept a change
  // (a follower refuses it with FAILED_PRECONDITION) and has a plan of a
  // non-zero epoch, given in `epoch`.
  int LeaderReplica(uint64_t* epoch = nullptr);

  // An Operator API client with the named operator's certificate, to a replica.
  std::unique_ptr<v1::Operator::Stub> OperatorClient(const std::string& operator_name = "admin", int replica = 0);

 private:
  explicit LocalLab(LabOptions options) : options_(std::move(options)) {}
  absl::Status WritePathcompConfig(int replica, const std::string& listen_address);
  absl::Status WriteHealthFile(const std::string& facility_id);
  absl::Status WriteFabricFile(const v1::Fabric& fabric);
  std::string FabricFilePath(const std::string& facility_id) const;
  // The routerd's bgp: section, starting the facility's FRR first if needed.
  absl::StatusOr<std::string> BgpBlock(const std::string& facility_id);
  absl::Status Spawn(const std::string& name, const std::string& binary,
                     const std::string& config);
  // The `metrics:` block of a process's config, and where it writes its address.
  std::string MetricsBlock(const std::string& name) const;
  std::string AdminAddressFile(const std::string& name) const;

  LabOptions options_;
  topology::Topology topology_;
  std::vector<std::string> pathcomp_addresses_;  // per replica; empty until started
  std::unique_ptr<sim::EtcdCluster> etcd_;
  std::map<std::string, ChildProcessPtr> processes_;
  std::map<std::string, std::unique_ptr<FrrRouter>> frr_;  // per facility
  std::map<std::string, int> probe_ports_;  // per facility: its agent's UDP probe port
  // Per facility, per link: the health file fields forced on it.
  std::map<std::string, std::map<std::string, std::string>> link_overrides_;
  // Per facility, per plane: a state other than up written to its fabric file.
  std::map<std::string, std::map<uint32_t, std::string>> plane_states_;
};

}  // namespace geodesic::sim
