#pragma once
// Test-only: running the real tectl binary (from $GEODESIC_BINARY_DIR/bin)
// and reading what it printed; where the checkout's data is; counts read
// straight from REPETITA files, to check imports against. Directories are
// the tests' shared TempDir (tests/support/test_dirs.h).
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "google/protobuf/util/json_util.h"
#include "tests/support/test_dirs.h"

namespace geodesic::cli::tectl_testing {

using ::geodesic::testing::Backbone;   // deploy/examples/backbone.yaml
using ::geodesic::testing::BinaryDir;  // $GEODESIC_BINARY_DIR
using ::geodesic::testing::SourceDir;  // $GEODESIC_SOURCE_DIR
using ::geodesic::testing::TempDir;
std::string RepetitaDir();  // ../shared/data/repetita beside the checkout
// How tectl names a file in the journal: absolute, normalized.
std::string Absolute(const std::string& path);
std::string ReadFile(const std::string& path);

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
