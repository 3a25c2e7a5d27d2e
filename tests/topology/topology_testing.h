#pragma once
// What the topology tests share: where the checkout and the shared data are,
// scratch files, and a readable comparison of two topologies. Test-only.
#include <google/protobuf/util/message_differencer.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "topology/inventory.h"

namespace geodesic::topology::testing {

inline std::string SourceDir() {
  const char* dir = std::getenv("GEODESIC_SOURCE_DIR");
  return dir ? dir : ".";
}

// ../shared/data beside the checkout (CI keeps ../shared next to the clone).
inline std::string SharedDataDir() { return SourceDir() + "/../shared/data"; }
inline std::string RepetitaDir() { return SharedDataDir() + "/repetita"; }
inline std::string TestdataDir() { return SourceDir() + "/tests/topology/testdata"; }

// A directory removed with everything in it when the object goes away.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "geodesic-topology-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `content` to `name` inside the directory; returns the file's path.
  std::string Write(const std::string& name, const std::string& content) const {
    const std::string file = path_ + "/" + name;
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }

 private:
  std::string path_;
};

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
