#pragma once
// Test-only: running the real tectl binary (from $GEODESIC_BINARY_DIR/bin)
// and reading what it printed; where the checkout's data is; scratch
// directories; counts read straight from REPETITA files, to check imports
// against.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "google/protobuf/util/json_util.h"

namespace geodesic::cli::tectl_testing {

std::string SourceDir();    // $GEODESIC_SOURCE_DIR
std::string BinaryDir();    // $GEODESIC_BINARY_DIR
std::string RepetitaDir();  // ../shared/data/repetita beside the checkout
std::string Backbone();     // deploy/examples/backbone.yaml
// How tectl names a file in the journal: absolute, normalized.
std::string Absolute(const std::string& path);
std::string ReadFile(const std::string& path);

// A fresh directory under $TMPDIR, removed with its contents.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct TectlRun {
  int exit_code = -1;  // 128 + signal when killed
  std::string out, err;
};
std::ostream& operator<<(std::ostream& os, const TectlRun& run);

// Runs tectl with `args` to completion, stdout and stderr apart, in this
// process's environment without GEODESIC_SERVER, GEODESIC_CA, GEODESIC_CERT
// and GEODESIC_KEY (the flags say everything) and with USER=tectl-test.
TectlRun Tectl(const std::vector<std::string>& args);

// `json` as a Message; a test failure when it does not parse.
template <typename Message>
Message ParseJson(const std::string& json) {
  Message message;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &message);
  EXPECT_TRUE(status.ok()) << status << "\n" << json;
  return message;
}

// What a REPETITA network holds, counted from the text of <name>.graph and
// <name>.0000.demands: nodes, directed edges, and demands with traffic (rows
// with bw 0 carry none).
struct RepetitaCounts {
  int nodes = 0, edges = 0, demands_with_traffic = 0;
};
RepetitaCounts CountRepetita(const std::string& name);

// The row of `kind` in import's table: ADDED, CHANGED, REMOVED, UNCHANGED.
std::vector<int> ImportRow(const std::string& table, const std::string& kind);

size_t LineCount(const std::string& text);

}  // namespace geodesic::cli::tectl_testing
