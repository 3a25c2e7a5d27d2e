#include "tests/support/test_dirs.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

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

TempDir::TempDir(std::string_view name) {
  std::error_code error;
  std::filesystem::path base = std::filesystem::temp_directory_path(error);
  if (error) base = "/tmp";
  std::string pattern = (base / ("geodesic-" + std::string(name) + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror(("mkdtemp " + pattern).c_str());
    std::abort();
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  if (keep_) {
    std::fprintf(stderr, "kept %s\n", path_.c_str());
    return;
  }
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::Write(std::string_view name, std::string_view content) const {
  const std::string file = Join(name);
  std::ofstream out(file, std::ios::binary);
  out << content;
  out.close();
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", file.c_str());
    std::abort();
  }
  return file;
}

}  // namespace geodesic::testing
