// fabric-plan: sizes a non-blocking rail-optimized fabric with two and with three
// tiers, and compares more planes against a third tier for a GPU target.
//
//   fabric-plan --radix 64 --planes 8 --nics-per-gpu 8 [--target-gpus 100000]
//
// Exit codes: 0 ok, 2 bad usage (one-line error, then the usage).
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "daemon/version.h"
#include "fabric/fabric_planner.h"
#include "fabric/plan_report.h"

namespace geodesic::fabric {
namespace {

constexpr const char* kUsage =
    "usage: fabric-plan --radix N --planes N --nics-per-gpu N [--target-gpus N]\n"
    "  --radix         ports per switch (even)\n"
    "  --planes        identical planes; must divide --nics-per-gpu\n"
    "  --nics-per-gpu  NICs per GPU, each into one plane\n"
    "  --target-gpus   also compare more planes against a third tier for this many GPUs\n";

struct Options {
  uint64_t radix = 0, planes = 0, nics_per_gpu = 0, target_gpus = 0;
  bool help = false;
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "fabric-plan: %s\n%s", message.c_str(), kUsage);
  return 2;
}

std::optional<uint64_t> ParseCount(const std::string& text, uint64_t max) {
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value > max) return std::nullopt;
  return value;
}

// Accepts "--flag value" and "--flag=value"; every flag but --target-gpus is required.
std::optional<Options> ParseFlags(int argc, char** argv, std::string& error) {
  Options options;
  const std::map<std::string, std::pair<uint64_t*, uint64_t>> flags = {
      {"--radix", {&options.radix, UINT32_MAX}},
      {"--planes", {&options.planes, UINT32_MAX}},
      {"--nics-per-gpu", {&options.nics_per_gpu, UINT32_MAX}},
      {"--target-gpus", {&options.target_gpus, UINT64_MAX}}};
  std::map<std::string, bool> seen;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      return options;
    }
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    auto it = flags.find(arg);
    if (it == flags.end()) {
      error = arg.rfind("-", 0) == 0 ? "unknown flag " + arg : "unexpected argument " + arg;
      return std::nullopt;
    }
    if (!value) {
      if (i + 1 >= argc) {
        error = arg + " needs a value";
        return std::nullopt;
      }
      value = argv[++i];
    }
    if (seen[arg]) {
      error = arg + " given twice";
      return std::nullopt;
    }
    seen[arg] = true;
    std::optional<uint64_t> count = ParseCount(*value, it->second.second);
    if (!count) {
      error = arg + ": expected a whole number, got \"" + *value + "\"";
      return std::nullopt;
    }
    *it->second.first = *count;
  }
  for (const char* required : {"--radix", "--planes", "--nics-per-gpu"}) {
    if (!seen[required]) {
      error = std::string(required) + " is required";
      return std::nullopt;
    }
  }
  if (seen["--target-gpus"] && options.target_gpus == 0) {
    error = "--target-gpus: must be positive";
    return std::nullopt;
  }
  return options;
}

int Run(const Options& options) {
  const auto radix = static_cast<uint32_t>(options.radix);
  const auto planes = static_cast<uint32_t>(options.planes);
  const auto nics = static_cast<uint32_t>(options.nics_per_gpu);
  absl::StatusOr<PlanResult> two = PlanTwoTier(radix, planes, nics);
  if (!two.ok()) return UsageError(std::string(two.status().message()));
  absl::StatusOr<PlanResult> three = PlanThreeTier(radix, planes, nics);
  if (!three.ok()) return UsageError(std::string(three.status().message()));
  std::fputs(FormatPlanTable(*two, *three).c_str(), stdout);
  if (options.target_gpus > 0) {
    absl::StatusOr<TierVsPlanes> comparison = CompareTierVsPlanes(radix, nics, options.target_gpus);
    if (!comparison.ok()) return UsageError(std::string(comparison.status().message()));
    std::fputs(("\n" + FormatComparison(*comparison)).c_str(), stdout);
  }
  return 0;
}

}  // namespace
}  // namespace geodesic::fabric

int main(int argc, char** argv) {
  using namespace geodesic::fabric;
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    std::printf("fabric-plan %s\n", std::string(geodesic::daemon::Version()).c_str());
    return 0;
  }
  std::string error;
  std::optional<Options> options = ParseFlags(argc, argv, error);
  if (!options) return UsageError(error);
  if (options->help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  return Run(*options);
}
