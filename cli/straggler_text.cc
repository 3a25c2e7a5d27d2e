#include "cli/straggler_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace geodesic::cli {

std::string NetworkSourceText(v1::NetworkSource source) {
  switch (source) {
    case v1::NETWORK_SOURCE_SERVICE_REPORT: return "measured by the caller";
    case v1::NETWORK_SOURCE_LINK_PROBES: return "measured by link probes";
    case v1::NETWORK_SOURCE_LOCAL: return "same facility";
    default: return "not measured";
  }
}

std::string StragglerText(const v1::Straggler& straggler) {
  const bool network = straggler.component() == v1::LATENCY_COMPONENT_NETWORK;
  return absl::StrCat("hop ", straggler.hop() + 1, " ", straggler.service_id(), "@", straggler.replica_facility_id(),
                      ", ", network ? "network " : "service ",
                      absl::StrFormat("%+.1f ms", straggler.deviation_us() / 1000.0), " over plan (",
                      network ? NetworkSourceText(straggler.network_source()) : "reported by the service", ")");
}

}  // namespace geodesic::cli
