#pragma once
// A backbone that real packets cross: one Linux network namespace per facility
// of a topology, one veth pair per backbone link, shaped like the link, with
// the kernel forwarding between them. The groundwork of the netns lab (issue
// 21): later pieces run FRR zebra, routerd and the site agents inside these
// namespaces; today tests install routes themselves (AddRoute).
//
// What Create builds:
//   - a namespace "<name_prefix>-<run>-<facility>" per facility, where <run> is
//     "<pid>x<4 hex digits>" of this process, so concurrent runs never collide
//     and a dead run's namespaces can be recognised (RemoveLeftovers);
//     lo up, IPv4 and IPv6 forwarding on, rp_filter off (weighted multipath is
//     asymmetric), multipath hashing on L4 ports (so UDP flows spread) with
//     a hash seed of its own (no polarization across hops; kernels 6.11+);
//   - the facility's host addresses on lo: the first address of its first IPv4
//     prefix (10.1.0.0/16 -> 10.1.0.1/32) and of its first IPv6 prefix
//     (2001:db8:1::/48 -> 2001:db8:1::1/128); none for a family it has no prefix of.
//     (lo, not a dummy interface: not every kernel has the dummy driver);
//   - with management_network, a veth pair per facility between the root
//     namespace ("gm<run's hex>-<index>") and the facility's ("mgmt"), a /31
//     from the management pool (the root end the even address), so daemons
//     in a facility reach the host's (a controller listening there) and
//     nothing else: no route beyond the connected /31 is installed, so
//     backbone traffic never takes it. Remove deletes the root ends at once
//     (not when the kernel gets round to a deleted namespace's veths). The
//     root end and its address are in the root namespace: two runs with
//     management networks at once need distinct pools. A backbone holds a
//     lock on its pool while it lives (flock, gone with its process); with
//     the default pool it takes the first free one of 169.254.100-199.0/24,
//     with a pool given it waits for that one;
//   - a veth pair per bidirectional link (the topology's directed links A->B and
//     B->A become one pair; a link without a reverse gets a pair of its own,
//     shaped alike both ways),
//     interfaces "g<index>a" in A's namespace and "g<index>b" in B's, with a /31
//     from the IPv4 pool and a /127 from the IPv6 pool (end a the even address);
//   - on each end's egress, tbf at the directed link's capacity x mbit_per_gbps
//     (SCALE: by default 1 Gbps of the model = 1 Mbit/s on the veth), the bucket
//     holding 5 ms at that rate (at least two full frames) and queueing at most
//     queue_ms; before it, when the kernel has netem (see LinkLatency), netem
//     delay of the link's one-way latency (netem the root qdisc, tbf its child;
//     netem's queue sized for twice the bandwidth-delay product).
//
// Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and iproute2 (`ip`, `tc`);
// SetLoss also needs nftables' `nft`. Every failure is an error naming the
// command that failed and what it printed.
//
// Thread-compatible: one thread mutates at a time; the const accessors and
// Exec may be called concurrently with each other.
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/process.h"
#include "topology/inventory.h"

namespace geodesic::sim {

enum class LinkLatency {
  kEmulateIfAvailable,  // netem delay where the kernel has netem, else none (latency_emulated() says which)
  kEmulate,             // netem delay, or Create fails with FailedPrecondition
  kNone,                // no delay beyond the veth's own
};

struct NetnsOptions {
  std::string name_prefix = "geo";               // namespaces are <name_prefix>-<run>-<facility>
  double mbit_per_gbps = 1.0;                    // shaping scale: Mbit/s on the veth per Gbps of capacity
  int queue_ms = 50;                             // tbf: the longest a packet waits in a link's queue
  std::string link_pool_v4 = "10.255.0.0/16";    // one /31 per link; must not overlap a facility prefix
  std::string link_pool_v6 = "fd00:6e65::/64";   // one /127 per link
  LinkLatency latency = LinkLatency::kEmulateIfAvailable;
  bool management_network = false;                   // a veth per facility to the root namespace (above)
  std::string management_pool_v4 = "169.254.100.0/24";  // one /31 per facility; not a facility's or link's
};

struct NetnsFacility {
  std::string id;
  std::string namespace_name;
  std::string host_v4;  // on lo, without a length; empty when the facility has no IPv4 prefix
  std::string host_v6;  // same for IPv6
  // With management_network: the facility's end of its management veth
  // (interface "mgmt") and the root namespace's end, both without a length;
  // empty otherwise.
  std::string management_address;
  std::string management_host_address;
};

// One end of a veth pair: the interface in the facility's namespace.
struct NetnsLinkEnd {
  std::string facility;
  std::string interface;
  std::string address_v4;  // without a length (the pair shares a /31)
  std::string address_v6;  // without a length (the pair shares a /127)
  double egress_mbit = 0;  // tbf rate towards the other end
};

// A veth pair: the topology's link a->b (forward_id) and its reverse b->a.
struct NetnsLink {
  int index = 0;
  std::string forward_id;
  std::string reverse_id;  // empty when the topology has no b->a link
  NetnsLinkEnd a;
  NetnsLinkEnd b;
};

// A next hop for AddRoute: across `link_id` (either direction's id) to the
// far end of the link, with a multipath weight 1..256.
struct WeightedNextHop {
  std::string link_id;
  int weight = 1;
};

class NetnsBackbone {
 public:
  // OK when this process may make namespaces (root, `ip netns` works; checked
  // by making and deleting one); FailedPrecondition saying why not otherwise.
  [[nodiscard]] static absl::Status Available();

  // Removes leftovers of dead runs first (RemoveLeftovers), then builds the
  // backbone described above. InvalidArgument for a topology it cannot build
  // (a link within one facility, a zero capacity, a pool too small or
  // overlapping a facility prefix, an id that cannot name a namespace);
  // FailedPrecondition for LinkLatency::kEmulate on a kernel without netem;
  // Internal naming the command when a step fails. On any error, everything
  // already made is removed.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<NetnsBackbone>> Create(const topology::Topology& topology,
                                                                            NetnsOptions options = {});

  // Deletes every namespace named "<name_prefix>-<pid>x<hex>-..." whose <pid>
  // is not a live process (a run that was killed before it could clean up);
  // the names it deleted (a process still in one is killed first). A live
  // run's namespaces are never touched; one that another run removes
  // meanwhile is no error. Safe to call from concurrent runs.
  [[nodiscard]] static absl::StatusOr<std::vector<std::string>> RemoveLeftovers(const std::string& name_prefix);

  // Removes every namespace it made (their veths and routes go with them),
  // killing any process still in one first.
  ~NetnsBackbone();
  NetnsBackbone(const NetnsBackbone&) = delete;
  NetnsBackbone& operator=(const NetnsBackbone&) = delete;

  // Same as the destructor, with the errors; idempotent.
  [[nodiscard]] absl::Status Remove();

  const std::string& run() const { return run_; }
  const std::vector<NetnsFacility>& facilities() const { return facilities_; }
  const std::vector<NetnsLink>& links() const { return links_; }
  // Whether links carry netem delay (see LinkLatency).
  bool latency_emulated() const { return latency_emulated_; }

  // NotFound for an unknown facility or link id (either direction's id).
  [[nodiscard]] absl::StatusOr<NetnsFacility> Facility(const std::string& facility_id) const;
  [[nodiscard]] absl::StatusOr<NetnsLink> Link(const std::string& link_id) const;
  // The end of `link_id` in `facility_id`'s namespace; InvalidArgument when
  // the link does not touch that facility.
  [[nodiscard]] absl::StatusOr<NetnsLinkEnd> End(const std::string& link_id, const std::string& facility_id) const;

  // Runs `argv` (argv[0] a program name looked up on PATH, or a path) in the
  // facility's namespace (`ip netns exec`), to completion: its exit code and
  // output. An error only when it cannot be run; a non-zero exit is a result.
  [[nodiscard]] absl::StatusOr<RunResult> Exec(const std::string& facility_id,
                                               const std::vector<std::string>& argv) const;
  // Starts `argv` (argv[0] a path) in the facility's namespace as a child
  // process (`ip netns exec`, which execs it: the child's pid is the
  // program's, and signals reach it), output appended to `log_path`. Stop it
  // before the backbone goes: a namespace lives on while a process is in it.
  [[nodiscard]] absl::StatusOr<ChildProcessPtr> Spawn(const std::string& facility_id,
                                                      const std::vector<std::string>& argv,
                                                      const std::string& log_path) const;
  // A socket (socket(2) arguments; close-on-exec) that lives in the facility's
  // namespace, whatever thread uses it later; the caller owns the descriptor.
  [[nodiscard]] absl::StatusOr<int> OpenSocket(const std::string& facility_id, int domain, int type) const;

  // Sets both ends of the link administratively up or down (a fiber cut).
  [[nodiscard]] absl::Status SetLinkUp(const std::string& link_id, bool up);
  // Drops `percent` (0..100, to 0.01) of the packets entering either end of
  // the link, at random (nftables `numgen random` on each end's ingress),
  // except ARP and IPv6 neighbour discovery (a gray failure loses traffic, not
  // the neighbours). 0 removes the loss. FailedPrecondition when nft is not
  // installed.
  [[nodiscard]] absl::Status SetLoss(const std::string& link_id, double percent);
  // Installs (or replaces) `prefix` in the facility's kernel table via
  // `next_hops`, weighted multipath when more than one. InvalidArgument for a
  // bad prefix, a next hop over a link that does not touch the facility, a
  // repeated link, a weight out of 1..256 or no next hop.
  [[nodiscard]] absl::Status AddRoute(const std::string& facility_id, const std::string& prefix,
                                      const std::vector<WeightedNextHop>& next_hops);
  // Removes `prefix` from the facility's table; NotFound when it is not there.
  [[nodiscard]] absl::Status DeleteRoute(const std::string& facility_id, const std::string& prefix);

 private:
  NetnsBackbone(std::string run, NetnsOptions options) : run_(std::move(run)), options_(std::move(options)) {}

  absl::Status AddFacility(const v1::Facility& facility);
  absl::Status AddManagementLink(NetnsFacility& facility);
  absl::Status ProbeLatencyEmulation();
  absl::Status AddLink(const v1::Link& forward, const v1::Link* reverse);
  absl::Status ShapeEgress(const NetnsLinkEnd& end, const v1::Link& link);
  const NetnsLink* FindLink(const std::string& link_id) const;
  const NetnsFacility* FindFacility(const std::string& facility_id) const;

  std::string run_;
  NetnsOptions options_;
  bool latency_emulated_ = false;
  std::vector<NetnsFacility> facilities_;
  std::vector<NetnsLink> links_;
  absl::flat_hash_map<std::string, int> link_by_id_;  // both directions' ids -> links_ index
  std::vector<std::string> namespaces_;               // made so far, removed by Remove()
  std::vector<std::string> management_interfaces_;    // root ends of management veths, removed by Remove()
  int management_pool_lock_ = -1;                     // flock'ed while the backbone lives
};
using NetnsBackbonePtr = std::unique_ptr<NetnsBackbone>;

}  // namespace geodesic::sim
