#pragma once
// Link utilization from the kernel's interface counters, for the backbone
// links that leave this facility through a local interface: the bytes the
// interface sent (/sys/class/net/<if>/statistics/tx_bytes) between two
// samples, over the link's capacity. The capacity is the configured one or
// else the interface's speed (/sys/class/net/<if>/speed, Mb/s).
//
// The sysfs root is a parameter so tests and drills can point it at a
// directory they write. Thread-compatible.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace geodesic::site_agent {

// Checks a Linux interface name (1..15 characters, no '/', not "." or "..",
// no whitespace), so it can safely become part of a path.
[[nodiscard]] absl::Status ValidateInterfaceName(const std::string& name);

class InterfaceCounters {
 public:
  explicit InterfaceCounters(std::string sysfs_root = "/sys/class/net");

  // The interface's speed in Gbps; NotFound when it does not exist,
  // Unavailable when the kernel does not know the speed (virtual
  // interfaces report -1).
  [[nodiscard]] absl::StatusOr<double> SpeedGbps(const std::string& interface) const;

  // Reads the interface's transmitted bytes and returns the utilization
  // (0..1, may exceed 1 if the capacity is understated) since the previous
  // sample of the same interface; nullopt on the first sample, after a
  // counter reset (the count went down) or when the counter cannot be read.
  std::optional<double> Sample(const std::string& interface, double capacity_gbps,
                               std::chrono::steady_clock::time_point now);

 private:
  struct Previous {
    uint64_t tx_bytes = 0;
    std::chrono::steady_clock::time_point at;
  };
  std::optional<uint64_t> ReadCounter(const std::string& path) const;

  std::string root_;
  std::map<std::string, Previous> previous_;
};

}  // namespace geodesic::site_agent
