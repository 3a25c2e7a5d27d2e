// Every daemon refuses a bad configuration at start: non-zero exit and a
// message that names the file and the key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sim/make_pki.h"
#include "sim/process.h"
#include "tests/support/test_dirs.h"

namespace geodesic {
namespace {

using ::testing::HasSubstr;

class BadConfigTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    temp_ = new testing::TempDir("bad-config");
    dir_ = temp_->path();
    const absl::Status pki = sim::RunMakePki(dir_ + "/pki", {"--facilities", "iad,chi", "--replicas", "pc1"});
    ASSERT_TRUE(pki.ok()) << pki;
  }
  static void TearDownTestSuite() {
    delete temp_;
    temp_ = nullptr;
  }

  static std::string Source() { return testing::SourceDir(); }
  static std::string Binary(const std::string& name) { return testing::BinaryDir() + "/bin/" + name; }

  // Runs `daemon --config <file with content>`; returns exit code and output.
  sim::RunResult Run(const std::string& daemon, const std::string& content) {
    const std::string path = dir_ + "/" + daemon + ".yaml";
    std::ofstream(path) << content;
    auto result = sim::RunCommand({Binary(daemon), "--config", path});
    EXPECT_TRUE(result.ok());
    last_path_ = path;
    return *result;
  }

  static testing::TempDir* temp_;
  static std::string dir_;
  std::string last_path_;
};

testing::TempDir* BadConfigTest::temp_ = nullptr;
std::string BadConfigTest::dir_;

TEST_F(BadConfigTest, PathcompMissingKeyAndWrongType) {
  auto result = Run("pathcomp", "replica_id: pc1\nlisten: 127.0.0.1:0\nsolve_debounce_ms: x\n");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr(last_path_ + ":1: state_dir: required key is missing"));
  EXPECT_THAT(result.output, HasSubstr(last_path_ + ":3: solve_debounce_ms: expected an unsigned"));
  EXPECT_THAT(result.output, HasSubstr(last_path_ + ":1: tls: required key is missing"));
}

TEST_F(BadConfigTest, PathcompTopologyWithUnknownFacility) {
  const std::string topology = dir_ + "/topology.yaml";
  std::ofstream(topology) << "facilities:\n  - {id: iad, position: {lat: 1, lon: 1}}\n"
                             "nodes:\n  - {id: n1, facility: atlantis}\nlinks: []\n";
  auto result = Run("pathcomp", "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: " + dir_ +
                                    "/state\ntopology: " + topology + "\ntls: {ca: " + dir_ +
                                    "/pki/ca.crt, cert: " + dir_ + "/pki/pathcomp-pc1.crt, key: " +
                                    dir_ + "/pki/pathcomp-pc1.key}\n");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr(topology + ":4: nodes[0].facility: unknown facility atlantis"));
}

TEST_F(BadConfigTest, AgentFacilityThatIsNotItsCertificates) {
  auto result = Run("site_agent", "facility: chi\npathcomp: [{address: 127.0.0.1:1}]\n"
                                  "tls: {ca: " + dir_ + "/pki/ca.crt, cert: " + dir_ +
                                      "/pki/site-iad-agent.crt, key: " + dir_ +
                                      "/pki/site-iad-agent.key}\nlinks: [{id: chi-iad}]\n");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("facility: \"chi\" does not match the certificate"));
}

TEST_F(BadConfigTest, AgentWrongTypes) {
  auto result = Run("site_agent", "facility: iad\npathcomp: 127.0.0.1:1\nlinks:\n"
                                  "  - {id: iad-chi, state: sideways, rtt_us: -5}\n");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr(last_path_ + ":2: pathcomp: expected a list"));
  EXPECT_THAT(result.output,
              HasSubstr(last_path_ + ":4: links[0].state: expected up, degraded or down"));
  EXPECT_THAT(result.output,
              HasSubstr(last_path_ + ":4: links[0].rtt_us: expected an unsigned integer"));
  EXPECT_THAT(result.output, HasSubstr(last_path_ + ":1: tls: required key is missing"));
}

TEST_F(BadConfigTest, RouterdMissingKeyAndUnknownKey) {
  auto result = Run("routerd", "facility: iad\npathcomp: [{address: 127.0.0.1:1}]\nstat_dir: x\n");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr(last_path_ + ":1: state_dir: required key is missing"));
  EXPECT_THAT(result.output, HasSubstr(last_path_ + ":3: stat_dir: unknown key"));
}

TEST_F(BadConfigTest, MissingConfigFile) {
  auto result = sim::RunCommand({Binary("routerd"), "--config", dir_ + "/nope.yaml"});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 1);
  EXPECT_THAT(result->output, HasSubstr(dir_ + "/nope.yaml: cannot open the file"));
}

}  // namespace
}  // namespace geodesic
