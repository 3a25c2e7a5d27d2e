#include "sim/netns/netns_backbone.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace geodesic::sim {
namespace {

constexpr char kIp[] = "/usr/sbin/ip";
constexpr char kTc[] = "/usr/sbin/tc";
constexpr char kNft[] = "/usr/sbin/nft";
constexpr char kSysctl[] = "/usr/sbin/sysctl";
constexpr char kNetnsDir[] = "/run/netns";
constexpr int kMaxWeight = 256;            // Linux multipath weights are 1..256
constexpr double kBucketSeconds = 0.005;  // tbf bucket: 5 ms at the rate
constexpr int kMinBucketBytes = 2 * 1514;  // and at least two full-size frames
constexpr int kNetemMinLimitPackets = 1000;  // netem's default queue
constexpr char kLossTable[] = "geodesic_loss";

// Runs a command that must succeed; the error names it and quotes its output.
absl::Status Run(const std::vector<std::string>& argv) {
  absl::StatusOr<RunResult> result = RunCommand(argv);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::InternalError(absl::StrCat("`", absl::StrJoin(argv, " "), "` exited ", result->exit_code, ": ",
                                            absl::StripAsciiWhitespace(result->output)));
  }
  return absl::OkStatus();
}

// An address of either family as 16 bytes (IPv4 in the last four), with its prefix length.
struct ParsedPrefix {
  int family = AF_INET;
  std::array<unsigned char, 16> bytes{};
  int length = 0;
  int bits() const { return family == AF_INET ? 32 : 128; }
};

absl::StatusOr<ParsedPrefix> ParsePrefix(const std::string& cidr) {
  std::pair<std::string, std::string> parts = absl::StrSplit(cidr, absl::MaxSplits('/', 1));
  ParsedPrefix prefix;
  prefix.family = parts.first.find(':') == std::string::npos ? AF_INET : AF_INET6;
  unsigned char* target = prefix.family == AF_INET ? prefix.bytes.data() + 12 : prefix.bytes.data();
  if (inet_pton(prefix.family, parts.first.c_str(), target) != 1 || !absl::SimpleAtoi(parts.second, &prefix.length) ||
      prefix.length < 0 || prefix.length > prefix.bits()) {
    return absl::InvalidArgumentError(absl::StrCat("\"", cidr, "\" is not an address prefix"));
  }
  return prefix;
}

std::string FormatAddress(const ParsedPrefix& prefix) {
  char text[INET6_ADDRSTRLEN];
  const unsigned char* source = prefix.family == AF_INET ? prefix.bytes.data() + 12 : prefix.bytes.data();
  inet_ntop(prefix.family, source, text, sizeof text);
  return text;
}

// The address `offset` past the start of `cidr`'s prefix; OutOfRange when the prefix is too small.
absl::StatusOr<std::string> AddressInPrefix(const std::string& cidr, uint64_t offset) {
  absl::StatusOr<ParsedPrefix> prefix = ParsePrefix(cidr);
  if (!prefix.ok()) return prefix.status();
  const int host_bits = prefix->bits() - prefix->length;
  if (host_bits < 64 && offset >= (uint64_t{1} << host_bits)) {
    return absl::OutOfRangeError(absl::StrCat(cidr, " has no address ", offset, " past its start"));
  }
  uint64_t carry = offset;
  for (int i = 15; i >= 0 && carry != 0; --i) {
    carry += prefix->bytes[i];
    prefix->bytes[i] = static_cast<unsigned char>(carry & 0xff);
    carry >>= 8;
  }
  return FormatAddress(*prefix);
}

bool Overlap(const ParsedPrefix& a, const ParsedPrefix& b) {
  if (a.family != b.family) return false;
  const int offset = a.family == AF_INET ? 96 : 0;
  const int length = std::min(a.length, b.length) + offset;
  for (int bit = offset; bit < length; ++bit) {
    const int byte = bit / 8, mask = 0x80 >> (bit % 8);
    if ((a.bytes[byte] & mask) != (b.bytes[byte] & mask)) return false;
  }
  return true;
}

// The first prefix of the family among the facility's, or "".
std::string FirstPrefix(const v1::Facility& facility, int family) {
  for (const std::string& cidr : facility.prefixes()) {
    absl::StatusOr<ParsedPrefix> prefix = ParsePrefix(cidr);
    if (prefix.ok() && prefix->family == family) return cidr;
  }
  return "";
}

std::string NewRun() {
  std::random_device device;
  return absl::StrFormat("%dx%04x", getpid(), device() & 0xffff);
}

// The owner's pid of a namespace named "<prefix>-<pid>x<hex>-<facility>", or -1.
pid_t OwnerPid(const std::string& name, const std::string& name_prefix) {
  absl::string_view rest = name;
  if (!absl::ConsumePrefix(&rest, name_prefix + "-")) return -1;
  const size_t x = rest.find('x');
  const size_t dash = rest.find('-');
  if (x == absl::string_view::npos || dash == absl::string_view::npos || x > dash) return -1;
  pid_t pid = 0;
  if (!absl::SimpleAtoi(rest.substr(0, x), &pid) || pid <= 0) return -1;
  return pid;
}

bool ProcessAlive(pid_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

// Kills whatever still runs in the namespace (`ip netns pids`), then deletes
// it: `ip netns del` only unnames a namespace, which lives on, veths and all,
// while a process is in it. The processes a run starts (ChildProcess) die with
// it; this is for any that outlived it all the same.
absl::Status DeleteNamespace(const std::string& name) {
  absl::StatusOr<RunResult> pids = RunCommand({kIp, "netns", "pids", name});
  if (pids.ok() && pids->exit_code == 0) {
    for (absl::string_view line : absl::StrSplit(pids->output, '\n', absl::SkipWhitespace())) {
      pid_t pid = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &pid) && pid > 1) kill(pid, SIGKILL);
    }
  }
  return Run({kIp, "netns", "del", name});
}

}  // namespace

absl::Status NetnsBackbone::Available() {
  if (geteuid() != 0) return absl::FailedPreconditionError("network namespaces need root (this process is not)");
  for (const char* program : {kIp, kTc}) {
    if (access(program, X_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(program, " is missing (Debian's iproute2)"));
    }
  }
  const std::string probe = absl::StrCat("geo-", NewRun(), "-probe");
  if (absl::Status made = Run({kIp, "netns", "add", probe}); !made.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("cannot make a network namespace: ", made.message()));
  }
  if (absl::Status deleted = Run({kIp, "netns", "del", probe}); !deleted.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("cannot delete a network namespace: ", deleted.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> NetnsBackbone::RemoveLeftovers(const std::string& name_prefix) {
  std::vector<std::string> removed;
  std::error_code error;
  if (!std::filesystem::exists(kNetnsDir, error)) return removed;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kNetnsDir, error)) {
    names.push_back(entry.path().filename().string());
  }
  if (error) return absl::InternalError(absl::StrCat("cannot list ", kNetnsDir, ": ", error.message()));
  for (const std::string& name : names) {
    const pid_t pid = OwnerPid(name, name_prefix);
    if (pid < 0 || ProcessAlive(pid)) continue;
    absl::Status deleted = DeleteNamespace(name);
    // Another run's Create may have removed it first: only one still there is an error.
    if (!deleted.ok() && std::filesystem::exists(std::filesystem::path(kNetnsDir) / name, error)) return deleted;
    if (deleted.ok()) removed.push_back(name);
  }
  return removed;
}

namespace {

// A file descriptor closed when it goes out of scope, unless released.
struct OwnedFd {
  int fd = -1;
  OwnedFd() = default;
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() {
    if (fd >= 0) close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

// An advisory lock on a management pool, held while the descriptor is open
// (flock: released when the process dies, so a crashed run leaves no stale
// lock). nullopt when `wait` is false and another holder has it.
absl::StatusOr<std::optional<int>> LockManagementPool(const std::string& pool, bool wait) {
  std::string name = pool;
  std::replace(name.begin(), name.end(), '/', '_');
  const std::string dir = std::filesystem::is_directory("/run/lock") ? "/run/lock" : "/tmp";
  const std::string path = absl::StrCat(dir, "/geodesic-netns-management-", name, ".lock");
  OwnedFd lock;
  lock.fd = open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (lock.fd < 0) return absl::UnavailableError(absl::StrCat("cannot open ", path, ": ", strerror(errno)));
  while (flock(lock.fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return std::optional<int>();
    return absl::UnavailableError(absl::StrCat("cannot lock ", path, ": ", strerror(errno)));
  }
  return std::optional<int>(lock.release());
}

}  // namespace

absl::StatusOr<std::unique_ptr<NetnsBackbone>> NetnsBackbone::Create(const topology::Topology& topology,
                                                                    NetnsOptions options) {
  if (options.mbit_per_gbps <= 0) return absl::InvalidArgumentError("mbit_per_gbps must be positive");
  if (options.queue_ms <= 0) return absl::InvalidArgumentError("queue_ms must be positive");
  if (options.name_prefix.empty() || options.name_prefix.find_first_of("/-") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("name_prefix \"", options.name_prefix,
                                                   "\" must be non-empty, without '/' or '-'"));
  }
  std::vector<const std::string*> pools = {&options.link_pool_v4, &options.link_pool_v6};
  if (options.management_network) {
    pools.push_back(&options.management_pool_v4);
    absl::StatusOr<ParsedPrefix> management = ParsePrefix(options.management_pool_v4);
    absl::StatusOr<ParsedPrefix> links = ParsePrefix(options.link_pool_v4);
    if (management.ok() && links.ok() && Overlap(*management, *links)) {
      return absl::InvalidArgumentError(absl::StrCat("management pool ", options.management_pool_v4,
                                                     " overlaps the link pool ", options.link_pool_v4));
    }
  }
  for (const std::string* pool : pools) {
    absl::StatusOr<ParsedPrefix> parsed = ParsePrefix(*pool);
    if (!parsed.ok()) return parsed.status();
    for (const v1::Facility& facility : topology.facilities) {
      for (const std::string& cidr : facility.prefixes()) {
        absl::StatusOr<ParsedPrefix> prefix = ParsePrefix(cidr);
        if (prefix.ok() && Overlap(*parsed, *prefix)) {
          return absl::InvalidArgumentError(absl::StrCat("link pool ", *pool, " overlaps ", facility.id(),
                                                         "'s prefix ", cidr));
        }
      }
    }
  }
  for (const v1::Facility& facility : topology.facilities) {
    if (facility.id().empty() || facility.id().find('/') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("facility id \"", facility.id(), "\" cannot name a namespace"));
    }
  }
  if (absl::StatusOr<std::vector<std::string>> leftovers = RemoveLeftovers(options.name_prefix); !leftovers.ok()) {
    return leftovers.status();
  }
  // The management pool's addresses live in the root namespace, which
  // concurrent labs (ctest -j) share: each holds its pool while it lives.
  OwnedFd pool_lock;
  if (options.management_network) {
    if (options.management_pool_v4 == NetnsOptions().management_pool_v4) {
      for (int third = 100; third < 200 && pool_lock.fd < 0; ++third) {
        const std::string pool = absl::StrCat("169.254.", third, ".0/24");
        absl::StatusOr<std::optional<int>> locked = LockManagementPool(pool, /*wait=*/false);
        if (!locked.ok()) return locked.status();
        if (!locked->has_value()) continue;
        pool_lock.fd = **locked;
        options.management_pool_v4 = pool;
      }
      if (pool_lock.fd < 0) {
        return absl::ResourceExhaustedError("every management pool 169.254.100-199.0/24 is held by another lab");
      }
    } else {
      absl::StatusOr<std::optional<int>> locked = LockManagementPool(options.management_pool_v4, /*wait=*/true);
      if (!locked.ok()) return locked.status();
      pool_lock.fd = **locked;
    }
  }

  std::unique_ptr<NetnsBackbone> backbone(new NetnsBackbone(NewRun(), std::move(options)));
  backbone->management_pool_lock_ = pool_lock.release();
  for (const v1::Facility& facility : topology.facilities) {
    if (absl::Status added = backbone->AddFacility(facility); !added.ok()) return added;
  }
  if (absl::Status probed = backbone->ProbeLatencyEmulation(); !probed.ok()) return probed;
  // Pair each directed link with the first unpaired link running the other way between the same nodes.
  std::vector<bool> paired(topology.links.size(), false);
  for (size_t i = 0; i < topology.links.size(); ++i) {
    if (paired[i]) continue;
    const v1::Link& forward = topology.links[i];
    const v1::Link* reverse = nullptr;
    for (size_t j = i + 1; j < topology.links.size() && reverse == nullptr; ++j) {
      const v1::Link& candidate = topology.links[j];
      if (!paired[j] && candidate.src_node_id() == forward.dst_node_id() &&
          candidate.dst_node_id() == forward.src_node_id()) {
        paired[j] = true;
        reverse = &candidate;
      }
    }
    paired[i] = true;
    if (absl::Status added = backbone->AddLink(forward, reverse); !added.ok()) return added;
  }
  return backbone;
}

absl::Status NetnsBackbone::AddFacility(const v1::Facility& facility) {
  NetnsFacility made;
  made.id = facility.id();
  made.namespace_name = absl::StrCat(options_.name_prefix, "-", run_, "-", facility.id());
  const std::string& ns = made.namespace_name;
  if (absl::Status added = Run({kIp, "netns", "add", ns}); !added.ok()) return added;
  namespaces_.push_back(ns);
  if (absl::Status up = Run({kIp, "-n", ns, "link", "set", "lo", "up"}); !up.ok()) return up;
  if (absl::Status set = Run({kIp, "netns", "exec", ns, kSysctl, "-q", "-w", "net.ipv4.ip_forward=1",
                              "net.ipv6.conf.all.forwarding=1", "net.ipv4.conf.all.rp_filter=0",
                              "net.ipv4.conf.default.rp_filter=0", "net.ipv4.fib_multipath_hash_policy=1",
                              "net.ipv6.fib_multipath_hash_policy=1", "net.ipv6.conf.default.accept_dad=0",
                              // a router keeps its addresses while a link is down: without this the
                              // kernel drops a veth's IPv6 address at `ip link set down` and a
                              // spliced fiber comes back without it
                              "net.ipv6.conf.all.keep_addr_on_down=1", "net.ipv6.conf.default.keep_addr_on_down=1"});
      !set.ok()) {
    return set;
  }
  // A hash seed of its own, as every router has: with the kernel's one
  // global seed, a flow hashed onto a route's first next hop takes the first
  // at every hop (polarization), and links carry what no plan gave them.
  // Kernels before 6.11 have no such sysctl (and keep the global seed).
  if (access("/proc/sys/net/ipv4/fib_multipath_hash_seed", F_OK) == 0) {
    const uint32_t seed = static_cast<uint32_t>(absl::Hash<std::string>{}(ns)) | 1;
    if (absl::Status set = Run({kIp, "netns", "exec", ns, kSysctl, "-q", "-w",
                                absl::StrCat("net.ipv4.fib_multipath_hash_seed=", seed)});
        !set.ok()) {
      return set;
    }
  }
  for (const auto& [family, host, length] : {std::tuple{AF_INET, &made.host_v4, "/32"},
                                             std::tuple{AF_INET6, &made.host_v6, "/128"}}) {
    const std::string prefix = FirstPrefix(facility, family);
    if (prefix.empty()) continue;
    absl::StatusOr<std::string> address = AddressInPrefix(prefix, 1);
    if (!address.ok()) return address.status();
    if (absl::Status added = Run({kIp, "-n", ns, "addr", "add", *address + length, "dev", "lo"}); !added.ok()) {
      return added;
    }
    *host = *address;
  }
  if (options_.management_network) {
    if (absl::Status added = AddManagementLink(made); !added.ok()) return added;
  }
  facilities_.push_back(std::move(made));
  return absl::OkStatus();
}

absl::Status NetnsBackbone::AddManagementLink(NetnsFacility& facility) {
  const uint64_t index = facilities_.size();
  absl::StatusOr<std::string> host_end = AddressInPrefix(options_.management_pool_v4, 2 * index);
  if (!host_end.ok()) return host_end.status();
  absl::StatusOr<std::string> facility_end = AddressInPrefix(options_.management_pool_v4, 2 * index + 1);
  if (!facility_end.ok()) return facility_end.status();
  // The root end's name is unique per run ("gm" + the run's hex + index, at
  // most 15 characters); it goes with the namespace (deleting a veth's end
  // deletes its peer).
  const std::string root_interface = absl::StrCat("gm", run_.substr(run_.find('x') + 1), "-", index);
  const std::string& ns = facility.namespace_name;
  const std::vector<std::vector<std::string>> steps = {
      {kIp, "link", "add", root_interface, "type", "veth", "peer", "name", "mgmt", "netns", ns},
      {kIp, "addr", "add", *host_end + "/31", "dev", root_interface},
      {kIp, "-n", ns, "addr", "add", *facility_end + "/31", "dev", "mgmt"},
      {kIp, "link", "set", root_interface, "up"},
      {kIp, "-n", ns, "link", "set", "mgmt", "up"},
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    if (absl::Status done = Run(steps[i]); !done.ok()) return done;
    if (i == 0) management_interfaces_.push_back(root_interface);
  }
  facility.management_address = *facility_end;
  facility.management_host_address = *host_end;
  return absl::OkStatus();
}

absl::Status NetnsBackbone::ProbeLatencyEmulation() {
  latency_emulated_ = false;
  if (options_.latency == LinkLatency::kNone || facilities_.empty()) return absl::OkStatus();
  const std::string& ns = facilities_.front().namespace_name;
  absl::StatusOr<RunResult> netem = RunCommand({kTc, "-n", ns, "qdisc", "add", "dev", "lo", "root", "netem",
                                                "delay", "1ms"});
  if (!netem.ok()) return netem.status();
  if (netem->exit_code != 0) {
    if (options_.latency == LinkLatency::kEmulate) {
      return absl::FailedPreconditionError(absl::StrCat("link latency needs netem, which this kernel lacks: ",
                                                        absl::StripAsciiWhitespace(netem->output)));
    }
    return absl::OkStatus();
  }
  latency_emulated_ = true;
  return Run({kTc, "-n", ns, "qdisc", "del", "dev", "lo", "root"});
}

absl::Status NetnsBackbone::AddLink(const v1::Link& forward, const v1::Link* reverse) {
  if (forward.src_facility_id() == forward.dst_facility_id()) {
    return absl::InvalidArgumentError(absl::StrCat("link ", forward.id(), " stays within facility ",
                                                   forward.src_facility_id(), ": no veth between namespaces"));
  }
  const NetnsFacility* a = FindFacility(forward.src_facility_id());
  const NetnsFacility* b = FindFacility(forward.dst_facility_id());
  if (a == nullptr || b == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("link ", forward.id(), " joins a facility the topology lacks"));
  }
  NetnsLink link;
  link.index = static_cast<int>(links_.size());
  link.forward_id = forward.id();
  link.reverse_id = reverse == nullptr ? "" : reverse->id();
  link.a.facility = a->id;
  link.a.interface = absl::StrCat("g", link.index, "a");
  link.b.facility = b->id;
  link.b.interface = absl::StrCat("g", link.index, "b");
  for (auto [end, pool_offset] : {std::pair{&link.a, 0}, std::pair{&link.b, 1}}) {
    const uint64_t offset = 2 * static_cast<uint64_t>(link.index) + pool_offset;
    absl::StatusOr<std::string> v4 = AddressInPrefix(options_.link_pool_v4, offset);
    absl::StatusOr<std::string> v6 = AddressInPrefix(options_.link_pool_v6, offset);
    if (!v4.ok()) return absl::InvalidArgumentError(absl::StrCat("link pool too small: ", v4.status().message()));
    if (!v6.ok()) return absl::InvalidArgumentError(absl::StrCat("link pool too small: ", v6.status().message()));
    end->address_v4 = *v4;
    end->address_v6 = *v6;
  }
  // Made inside the namespaces, never in this one: concurrent runs reuse the names.
  if (absl::Status made = Run({kIp, "-n", a->namespace_name, "link", "add", link.a.interface, "type", "veth", "peer",
                               "name", link.b.interface, "netns", b->namespace_name});
      !made.ok()) {
    return made;
  }
  link_by_id_[forward.id()] = link.index;
  if (reverse != nullptr) link_by_id_[reverse->id()] = link.index;
  for (const auto& [end, ns, egress] : {std::tuple{&link.a, a->namespace_name, &forward},
                                        std::tuple{&link.b, b->namespace_name, reverse != nullptr ? reverse : &forward}}) {
    if (egress->capacity_gbps() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("link ", egress->id(), " has no capacity to shape to"));
    }
    end->egress_mbit = egress->capacity_gbps() * options_.mbit_per_gbps;
    for (const std::vector<std::string>& step :
         {std::vector<std::string>{kIp, "-n", ns, "addr", "add", end->address_v4 + "/31", "dev", end->interface},
          std::vector<std::string>{kIp, "-n", ns, "addr", "add", end->address_v6 + "/127", "dev", end->interface,
                                   "nodad"},
          std::vector<std::string>{kIp, "-n", ns, "link", "set", end->interface, "up"}}) {
      if (absl::Status done = Run(step); !done.ok()) return done;
    }
    if (absl::Status shaped = ShapeEgress(*end, *egress); !shaped.ok()) return shaped;
  }
  links_.push_back(std::move(link));
  return absl::OkStatus();
}

absl::Status NetnsBackbone::ShapeEgress(const NetnsLinkEnd& end, const v1::Link& link) {
  const std::string& ns = FindFacility(end.facility)->namespace_name;
  const int64_t rate_kbit = std::max<int64_t>(1, std::llround(end.egress_mbit * 1000));
  const int64_t bucket_bytes = std::max<int64_t>(kMinBucketBytes, std::llround(rate_kbit * 1000 / 8 * kBucketSeconds));
  std::vector<std::string> tbf = {kTc, "-n", ns, "qdisc", "add", "dev", end.interface};
  if (latency_emulated_ && link.latency_us() > 0) {
    // netem holds every packet in flight: room for twice the bandwidth-delay
    // product in 1000-byte packets, not its default 1000 packets (a 400 Mbit/s
    // subsea link at 39 ms has 1.9 MB in flight).
    const int64_t in_flight_bytes = rate_kbit * 1000 / 8 * static_cast<int64_t>(link.latency_us()) / 1'000'000;
    const int64_t limit_packets = std::max<int64_t>(kNetemMinLimitPackets, 2 * in_flight_bytes / 1000);
    if (absl::Status delayed = Run({kTc, "-n", ns, "qdisc", "add", "dev", end.interface, "root", "handle", "1:",
                                    "netem", "delay", absl::StrCat(link.latency_us(), "us"), "limit",
                                    absl::StrCat(limit_packets)});
        !delayed.ok()) {
      return delayed;
    }
    tbf.insert(tbf.end(), {"parent", "1:1", "handle", "10:"});
  } else {
    tbf.insert(tbf.end(), {"root", "handle", "1:"});
  }
  tbf.insert(tbf.end(), {"tbf", "rate", absl::StrCat(rate_kbit, "kbit"), "burst", absl::StrCat(bucket_bytes),
                         "latency", absl::StrCat(options_.queue_ms, "ms")});
  return Run(tbf);
}

NetnsBackbone::~NetnsBackbone() {
  if (absl::Status removed = Remove(); !removed.ok()) {
    std::fprintf(stderr, "netns backbone %s: %s\n", run_.c_str(), std::string(removed.message()).c_str());
  }
  if (management_pool_lock_ >= 0) close(management_pool_lock_);  // the pool is free again
}

absl::Status NetnsBackbone::Remove() {
  absl::Status first_error;
  // The root namespace's ends first: a namespace's deletion takes its veths
  // down only later, in the kernel's own time, and a next run may want the
  // same management addresses at once.
  while (!management_interfaces_.empty()) {
    absl::Status deleted = Run({kIp, "link", "del", management_interfaces_.back()});
    if (!deleted.ok() && first_error.ok()) first_error = deleted;
    management_interfaces_.pop_back();
  }
  while (!namespaces_.empty()) {
    absl::Status deleted = DeleteNamespace(namespaces_.back());
    if (!deleted.ok() && first_error.ok()) first_error = deleted;
    namespaces_.pop_back();
  }
  return first_error;
}

const NetnsFacility* NetnsBackbone::FindFacility(const std::string& facility_id) const {
  for (const NetnsFacility& facility : facilities_) {
    if (facility.id == facility_id) return &facility;
  }
  return nullptr;
}

const NetnsLink* NetnsBackbone::FindLink(const std::string& link_id) const {
  auto it = link_by_id_.find(link_id);
  return it == link_by_id_.end() || it->second >= static_cast<int>(links_.size()) ? nullptr : &links_[it->second];
}

absl::StatusOr<NetnsFacility> NetnsBackbone::Facility(const std::string& facility_id) const {
  const NetnsFacility* facility = FindFacility(facility_id);
  if (facility == nullptr) return absl::NotFoundError(absl::StrCat("no facility ", facility_id, " in the backbone"));
  return *facility;
}

absl::StatusOr<NetnsLink> NetnsBackbone::Link(const std::string& link_id) const {
  const NetnsLink* link = FindLink(link_id);
  if (link == nullptr) return absl::NotFoundError(absl::StrCat("no link ", link_id, " in the backbone"));
  return *link;
}

absl::StatusOr<NetnsLinkEnd> NetnsBackbone::End(const std::string& link_id, const std::string& facility_id) const {
  const NetnsLink* link = FindLink(link_id);
  if (link == nullptr) return absl::NotFoundError(absl::StrCat("no link ", link_id, " in the backbone"));
  if (link->a.facility == facility_id) return link->a;
  if (link->b.facility == facility_id) return link->b;
  return absl::InvalidArgumentError(absl::StrCat("link ", link_id, " does not touch facility ", facility_id));
}

absl::StatusOr<RunResult> NetnsBackbone::Exec(const std::string& facility_id,
                                              const std::vector<std::string>& argv) const {
  const NetnsFacility* facility = FindFacility(facility_id);
  if (facility == nullptr) return absl::NotFoundError(absl::StrCat("no facility ", facility_id, " in the backbone"));
  if (argv.empty()) return absl::InvalidArgumentError("no program to run");
  std::vector<std::string> command = {kIp, "netns", "exec", facility->namespace_name};
  command.insert(command.end(), argv.begin(), argv.end());
  return RunCommand(command);
}

absl::StatusOr<ChildProcessPtr> NetnsBackbone::Spawn(const std::string& facility_id,
                                                     const std::vector<std::string>& argv,
                                                     const std::string& log_path) const {
  const NetnsFacility* facility = FindFacility(facility_id);
  if (facility == nullptr) return absl::NotFoundError(absl::StrCat("no facility ", facility_id, " in the backbone"));
  if (argv.empty()) return absl::InvalidArgumentError("no program to start");
  if (access(argv[0].c_str(), X_OK) != 0) return absl::NotFoundError(absl::StrCat(argv[0], ": not an executable"));
  std::vector<std::string> command = {kIp, "netns", "exec", facility->namespace_name};
  command.insert(command.end(), argv.begin(), argv.end());
  return ChildProcess::Spawn(std::move(command), log_path);
}

absl::StatusOr<int> NetnsBackbone::OpenSocket(const std::string& facility_id, int domain, int type) const {
  const NetnsFacility* facility = FindFacility(facility_id);
  if (facility == nullptr) return absl::NotFoundError(absl::StrCat("no facility ", facility_id, " in the backbone"));
  const std::string path = absl::StrCat(kNetnsDir, "/", facility->namespace_name);
  // setns moves only the calling thread; a thread of its own keeps the caller's where it is.
  int socket_fd = -1;
  std::string failed;
  std::thread([&] {
    const int ns_fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns_fd < 0) {
      failed = absl::StrCat("open ", path, ": ", strerror(errno));
      return;
    }
    const bool entered = setns(ns_fd, CLONE_NEWNET) == 0;
    if (!entered) failed = absl::StrCat("setns ", path, ": ", strerror(errno));
    close(ns_fd);
    if (!entered) return;
    socket_fd = socket(domain, type | SOCK_CLOEXEC, 0);
    if (socket_fd < 0) failed = absl::StrCat("socket in ", facility->namespace_name, ": ", strerror(errno));
  }).join();
  if (socket_fd < 0) return absl::InternalError(failed);
  return socket_fd;
}

absl::Status NetnsBackbone::SetLinkUp(const std::string& link_id, bool up) {
  const NetnsLink* link = FindLink(link_id);
  if (link == nullptr) return absl::NotFoundError(absl::StrCat("no link ", link_id, " in the backbone"));
  for (const NetnsLinkEnd* end : {&link->a, &link->b}) {
    if (absl::Status set = Run({kIp, "-n", FindFacility(end->facility)->namespace_name, "link", "set",
                                end->interface, up ? "up" : "down"});
        !set.ok()) {
      return set;
    }
  }
  return absl::OkStatus();
}

absl::Status NetnsBackbone::SetLoss(const std::string& link_id, double percent) {
  const NetnsLink* link = FindLink(link_id);
  if (link == nullptr) return absl::NotFoundError(absl::StrCat("no link ", link_id, " in the backbone"));
  if (!(percent >= 0 && percent <= 100)) {
    return absl::InvalidArgumentError(absl::StrCat("loss ", percent, "% is not within 0..100"));
  }
  if (access(kNft, X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("link loss needs ", kNft, " (Debian's nftables)"));
  }
  // One chain per end on its ingress, emptied and refilled: the rule is the loss.
  const int64_t per_10000 = std::llround(percent * 100);
  for (const NetnsLinkEnd* end : {&link->a, &link->b}) {
    const std::string chain = absl::StrCat(end->interface, "_loss");
    std::string script = absl::StrCat("add table netdev ", kLossTable, "; add chain netdev ", kLossTable, " ", chain,
                                      " { type filter hook ingress device \"", end->interface,
                                      "\" priority 0; }; flush chain netdev ", kLossTable, " ", chain);
    // Neighbour resolution is spared: lost ARP or ND would stall the link for
    // the neighbour timers' seconds, which is not the loss asked for.
    absl::StrAppend(&script, "; add rule netdev ", kLossTable, " ", chain, " meta protocol arp accept",
                    "; add rule netdev ", kLossTable, " ", chain,
                    " icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept");
    if (per_10000 >= 10000) {
      absl::StrAppend(&script, "; add rule netdev ", kLossTable, " ", chain, " drop");  // nft: < 10000 is out of range
    } else if (per_10000 > 0) {
      absl::StrAppend(&script, "; add rule netdev ", kLossTable, " ", chain, " numgen random mod 10000 < ",
                      per_10000, " drop");
    }
    if (absl::Status set = Run({kIp, "netns", "exec", FindFacility(end->facility)->namespace_name, kNft, script});
        !set.ok()) {
      return set;
    }
  }
  return absl::OkStatus();
}

absl::Status NetnsBackbone::AddRoute(const std::string& facility_id, const std::string& prefix,
                                     const std::vector<WeightedNextHop>& next_hops) {
  const NetnsFacility* facility = FindFacility(facility_id);
  if (facility == nullptr) return absl::NotFoundError(absl::StrCat("no facility ", facility_id, " in the backbone"));
  absl::StatusOr<ParsedPrefix> parsed = ParsePrefix(prefix);
  if (!parsed.ok()) return parsed.status();
  if (next_hops.empty()) return absl::InvalidArgumentError(absl::StrCat("route ", prefix, " has no next hop"));
  const bool v4 = parsed->family == AF_INET;
  std::vector<std::string> command = {kIp, "-n", facility->namespace_name, v4 ? "-4" : "-6", "route", "replace",
                                      prefix};
  std::vector<int> used;
  for (const WeightedNextHop& hop : next_hops) {
    absl::StatusOr<NetnsLinkEnd> near = End(hop.link_id, facility_id);
    if (!near.ok()) return near.status();
    const NetnsLink& link = *FindLink(hop.link_id);
    if (std::find(used.begin(), used.end(), link.index) != used.end()) {
      return absl::InvalidArgumentError(absl::StrCat("route ", prefix, " names link ", hop.link_id, " twice"));
    }
    used.push_back(link.index);
    if (hop.weight < 1 || hop.weight > kMaxWeight) {
      return absl::InvalidArgumentError(absl::StrCat("route ", prefix, " via ", hop.link_id, ": weight ", hop.weight,
                                                     " is not within 1..", kMaxWeight));
    }
    const NetnsLinkEnd& far = near->interface == link.a.interface ? link.b : link.a;
    const std::string& gateway = v4 ? far.address_v4 : far.address_v6;
    if (next_hops.size() == 1) {
      command.insert(command.end(), {"via", gateway, "dev", near->interface});
    } else {
      command.insert(command.end(), {"nexthop", "via", gateway, "dev", near->interface, "weight",
                                     absl::StrCat(hop.weight)});
    }
  }
  return Run(command);
}

absl::Status NetnsBackbone::DeleteRoute(const std::string& facility_id, const std::string& prefix) {
  const NetnsFacility* facility = FindFacility(facility_id);
  if (facility == nullptr) return absl::NotFoundError(absl::StrCat("no facility ", facility_id, " in the backbone"));
  absl::StatusOr<ParsedPrefix> parsed = ParsePrefix(prefix);
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<RunResult> result = RunCommand({kIp, "-n", facility->namespace_name,
                                                 parsed->family == AF_INET ? "-4" : "-6", "route", "del", prefix});
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    const std::string why = absl::StrCat("`ip route del ", prefix, "` in ", facility->namespace_name, ": ",
                                         absl::StripAsciiWhitespace(result->output));
    // RTNETLINK answers ESRCH ("No such process") for a route that is not there.
    if (absl::StrContains(result->output, "No such process")) return absl::NotFoundError(why);
    return absl::InternalError(why);
  }
  return absl::OkStatus();
}

}  // namespace geodesic::sim
