#pragma once
// Test-only support shared by the integration tests: where the checkout and
// the build are, temporary directories, and a LocalLab set up the way tests
// want it (probes off unless a test is about probing). Waiting for the lab
// is sim::LabClient's (sim/lab_client.h); PKIs are sim::RunMakePki's.
#include <string>

#include "sim/lab_client.h"
#include "sim/local_lab.h"
#include "sim/make_pki.h"

namespace geodesic::testing {

std::string SourceDir();  // $GEODESIC_SOURCE_DIR (set by geodesic_test)
std::string BinaryDir();  // $GEODESIC_BINARY_DIR
std::string Backbone();   // deploy/examples/backbone.yaml

// A fresh, empty directory under the system's temporary directory, named
// after `name`; removed with its contents when destroyed, unless keep() was
// called (a failed test keeps its logs).
class TempDir {
 public:
  explicit TempDir(const std::string& name);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

// Lab options for the backbone in `work_dir`: the real daemons of this build,
// link health from the agents' static source (no probes: a loaded machine's
// probe flaps would re-plan under the test).
sim::LabOptions LabOptionsFor(const std::string& work_dir, const std::string& topology_path = Backbone());

}  // namespace geodesic::testing
