#pragma once
// The one way the labs, the demo and the tests make a private PKI: the real
// deploy/pki/make-pki.sh, run as operators run it.
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace geodesic::sim {

// Runs `<source_dir>/deploy/pki/make-pki.sh --out out_dir args...` (for
// example {"--facilities", "iad,chi", "--replicas", "pc1"}). An empty
// `source_dir` means $GEODESIC_SOURCE_DIR (what geodesic_test sets).
// Internal when the script fails, with its exit code and output.
[[nodiscard]] absl::Status RunMakePki(const std::string& out_dir, const std::vector<std::string>& args,
                                      const std::string& source_dir = "");

}  // namespace geodesic::sim
