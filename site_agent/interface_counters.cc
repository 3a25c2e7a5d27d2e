#include "site_agent/interface_counters.h"

#include <cctype>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace geodesic::site_agent {
namespace {

constexpr size_t kMaxInterfaceName = 15;  // IFNAMSIZ - 1

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text(64, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

}  // namespace

absl::Status ValidateInterfaceName(const std::string& name) {
  if (name.empty() || name.size() > kMaxInterfaceName) {
    return absl::InvalidArgumentError(
        absl::StrCat("interface name \"", name, "\" must have 1 to ", kMaxInterfaceName, " characters"));
  }
  if (name == "." || name == "..") {
    return absl::InvalidArgumentError(absl::StrCat("\"", name, "\" is not an interface name"));
  }
  for (const char c : name) {
    if (c == '/' || std::isspace(static_cast<unsigned char>(c)) || !std::isprint(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError(
          absl::StrCat("interface name \"", name, "\" may not contain '/', spaces or control characters"));
    }
  }
  return absl::OkStatus();
}

InterfaceCounters::InterfaceCounters(std::string sysfs_root) : root_(std::move(sysfs_root)) {}

absl::StatusOr<double> InterfaceCounters::SpeedGbps(const std::string& interface) const {
  if (absl::Status valid = ValidateInterfaceName(interface); !valid.ok()) return valid;
  const std::string dir = absl::StrCat(root_, "/", interface);
  if (!std::filesystem::is_directory(dir)) {
    return absl::NotFoundError(absl::StrCat("no interface ", interface, " (", dir, ")"));
  }
  const std::optional<std::string> text = ReadSmallFile(dir + "/speed");
  int64_t mbps = -1;
  if (!text.has_value() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &mbps) || mbps <= 0) {
    return absl::UnavailableError(
        absl::StrCat("the speed of interface ", interface, " is unknown: configure the link's capacity_gbps"));
  }
  return static_cast<double>(mbps) / 1000.0;
}

std::optional<uint64_t> InterfaceCounters::ReadCounter(const std::string& path) const {
  const std::optional<std::string> text = ReadSmallFile(path);
  uint64_t value = 0;
  if (!text.has_value() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &value)) return std::nullopt;
  return value;
}

std::optional<double> InterfaceCounters::Sample(const std::string& interface, double capacity_gbps,
                                                std::chrono::steady_clock::time_point now) {
  const std::optional<uint64_t> tx_bytes =
      ReadCounter(absl::StrCat(root_, "/", interface, "/statistics/tx_bytes"));
  if (!tx_bytes.has_value()) {
    previous_.erase(interface);
    return std::nullopt;
  }
  const auto it = previous_.find(interface);
  const bool first = it == previous_.end();
  const Previous previous = first ? Previous{*tx_bytes, now} : it->second;
  previous_[interface] = Previous{*tx_bytes, now};
  const double seconds = std::chrono::duration<double>(now - previous.at).count();
  if (first || *tx_bytes < previous.tx_bytes || seconds <= 0 || capacity_gbps <= 0) return std::nullopt;
  const double bits = static_cast<double>(*tx_bytes - previous.tx_bytes) * 8;
  return bits / seconds / (capacity_gbps * 1e9);
}

}  // namespace geodesic::site_agent
