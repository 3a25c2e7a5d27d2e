#include "tests/support/lab_testing.h"

namespace geodesic::testing {

sim::LabOptions LabOptionsFor(const std::string& work_dir, const std::string& topology_path) {
  sim::LabOptions options;
  options.source_dir = SourceDir();
  options.binary_dir = BinaryDir();
  options.work_dir = work_dir;
  options.topology_path = topology_path;
  options.probe_interval_ms = 0;
  return options;
}

}  // namespace geodesic::testing
