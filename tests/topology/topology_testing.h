#pragma once
// What the topology tests share: where the checkout and the shared data are,
// and a readable comparison of two topologies. Test-only. Scratch files go in
// the tests' shared TempDir (tests/support/test_dirs.h).
#include <google/protobuf/util/message_differencer.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/support/test_dirs.h"
#include "topology/inventory.h"

namespace geodesic::topology::testing {

using ::geodesic::testing::SourceDir;
using ::geodesic::testing::TempDir;

// ../shared/data beside the checkout (CI keeps ../shared next to the clone).
inline std::string SharedDataDir() { return SourceDir() + "/../shared/data"; }
inline std::string RepetitaDir() { return SharedDataDir() + "/repetita"; }
inline std::string TestdataDir() { return SourceDir() + "/tests/topology/testdata"; }

template <typename Message>
std::string SectionDifference(const char* section, const std::vector<Message>& a,
                              const std::vector<Message>& b) {
  if (a.size() != b.size()) {
    return absl::StrCat(section, ": ", a.size(), " entries vs ", b.size());
  }
  for (size_t i = 0; i < a.size(); ++i) {
    std::string report;
    google::protobuf::util::MessageDifferencer differencer;
    differencer.ReportDifferencesToString(&report);
    if (!differencer.Compare(a[i], b[i])) {
      return absl::StrCat(section, "[", i, "]: ", report, "\n  ", a[i].ShortDebugString(),
                          "\n  ", b[i].ShortDebugString());
    }
  }
  return "";
}

// Empty when both topologies hold the same entities in the same order; else
// the first difference.
inline std::string TopologyDifference(const Topology& a, const Topology& b) {
  for (std::string difference :
       {SectionDifference("facilities", a.facilities, b.facilities),
        SectionDifference("nodes", a.nodes, b.nodes), SectionDifference("links", a.links, b.links),
        SectionDifference("fabrics", a.fabrics, b.fabrics),
        SectionDifference("services", a.services, b.services),
        SectionDifference("workloads", a.workloads, b.workloads)}) {
    if (!difference.empty()) return difference;
  }
  return "";
}

}  // namespace geodesic::topology::testing
