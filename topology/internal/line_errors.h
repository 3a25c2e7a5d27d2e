#pragma once
// Collects the problems an importer finds, each as "file:line: reason", and
// turns them into one InvalidArgument status. Internal to the topology component.
#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace geodesic::topology::internal {

class LineErrors {
 public:
  // Beyond this many, further errors are counted, not listed.
  static constexpr size_t kMaxListed = 50;

  // `line` is 1-based; 0 leaves it out ("file: reason").
  void Add(const std::string& file, size_t line, const std::string& reason);
  bool empty() const { return count_ == 0; }
  size_t count() const { return count_; }
  // OK when empty; else InvalidArgument with one error per line, in file
  // order (files in the order first named, then by line).
  absl::Status ToStatus() const;

 private:
  struct Entry {
    size_t file;  // index into files_
    size_t line;
    std::string text;
  };
  std::vector<std::string> files_;
  std::vector<Entry> listed_;
  size_t count_ = 0;
};

}  // namespace geodesic::topology::internal
