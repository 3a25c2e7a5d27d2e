#include "tests/support/lab_testing.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace geodesic::testing {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace

std::string SourceDir() { return Env("GEODESIC_SOURCE_DIR"); }
std::string BinaryDir() { return Env("GEODESIC_BINARY_DIR"); }
std::string Backbone() { return SourceDir() + "/deploy/examples/backbone.yaml"; }

TempDir::TempDir(const std::string& name) {
  std::string pattern = (std::filesystem::temp_directory_path() / ("geodesic-" + name + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  if (keep_) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

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
