#pragma once
// Test-only, for every test (none of it starts a lab): where the checkout and
// the build are, and the one temporary directory the tests use. A test that
// runs a LocalLab adds tests/support/lab_testing.h.
#include <string>
#include <string_view>

namespace geodesic::testing {

std::string SourceDir();  // $GEODESIC_SOURCE_DIR (set by geodesic_test)
std::string BinaryDir();  // $GEODESIC_BINARY_DIR
std::string Backbone();   // deploy/examples/backbone.yaml

// A fresh, empty directory under the system's temporary directory ($TMPDIR,
// else /tmp), named after `name`; removed with its contents when destroyed,
// unless keep() was called (a failed test keeps its logs). Aborts the test
// program when no directory can be made. Thread-compatible.
class TempDir {
 public:
  explicit TempDir(std::string_view name = "test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // A path inside the directory (nothing is created).
  std::string Join(std::string_view name) const { return path_ + "/" + std::string(name); }
  // Writes `content` to `name` inside the directory; returns the file's path.
  // Aborts when it cannot be written.
  std::string Write(std::string_view name, std::string_view content) const;
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace geodesic::testing
