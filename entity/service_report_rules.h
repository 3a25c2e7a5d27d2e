#pragma once
// The field rules of a service latency report (telemetry.proto,
// ServiceLatencyReport), shared by the site agent that accepts reports from
// services and pathcomp that applies them, so that what an agent relays is
// never refused for its values. What only pathcomp can check (the chain, its
// hop's service, the replica) is pathcomp's (model_telemetry.cc).
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "entity/entity_id.h"
#include "geodesic/v1/telemetry.pb.h"

namespace geodesic::entity {

// Above these a figure is a broken clock or a unit mistake, not a measurement.
inline constexpr uint64_t kMaxServiceLatencyUs = 10'000'000;  // 10 s
inline constexpr uint64_t kMaxNetworkRttUs = 10'000'000;      // 10 s
inline constexpr uint32_t kMaxChainHop = 1023;
inline constexpr uint64_t kMaxReportCalls = 1'000'000'000;
inline constexpr uint64_t kMaxReportWindowMs = 3'600'000;  // 1 h

// OK when every field a service sets is well formed and plausible;
// InvalidArgument naming the field otherwise. received_at_unix_ms is not
// checked (the agent sets it).
[[nodiscard]] inline absl::Status ValidateServiceReportFields(const v1::ServiceLatencyReport& report) {
  auto invalid = [&](const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat("service report (workload \"", report.workload_id(), "\", hop ", report.hop(), "): ", what));
  };
  if (!IsValidEntityId(report.workload_id())) {
    return invalid(absl::StrCat("workload_id must match ", kEntityIdRule));
  }
  if (!IsValidEntityId(report.service_id())) return invalid(absl::StrCat("service_id must match ", kEntityIdRule));
  if (report.hop() > kMaxChainHop) return invalid(absl::StrCat("hop must be at most ", kMaxChainHop));
  if (report.service_latency_us() > kMaxServiceLatencyUs) {
    return invalid(absl::StrCat("service_latency_us must be at most ", kMaxServiceLatencyUs, " (10 s)"));
  }
  if (report.network_rtt_us() > kMaxNetworkRttUs) {
    return invalid(absl::StrCat("network_rtt_us must be at most ", kMaxNetworkRttUs, " (10 s; 0 = not measured)"));
  }
  if (report.calls() < 1 || report.calls() > kMaxReportCalls) {
    return invalid(absl::StrCat("calls must be within [1, ", kMaxReportCalls, "]"));
  }
  if (report.window_ms() < 1 || report.window_ms() > kMaxReportWindowMs) {
    return invalid(absl::StrCat("window_ms must be within [1, ", kMaxReportWindowMs, "]"));
  }
  return absl::OkStatus();
}

}  // namespace geodesic::entity
