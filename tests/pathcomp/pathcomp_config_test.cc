#include "pathcomp/service/pathcomp_config.h"

#include "config/shared_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace geodesic::pathcomp {
namespace {

using ::testing::HasSubstr;

std::string WriteTemp(const std::string& content) {
  char path[] = "/tmp/pathcomp-config-XXXXXX";
  const int fd = mkstemp(path);
  close(fd);
  std::ofstream(path) << content;
  return path;
}

TEST(PathcompConfigTest, LoadsAValidConfig) {
  const std::string path = WriteTemp(
      "replica_id: pc1\nlisten: 127.0.0.1:0\nstate_dir: state\ntopology: /t.yaml\n"
      "tls: {ca: ca.crt, cert: c.crt, key: c.key}\n");
  auto config = LoadPathcompConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->replica_id, "pc1");
  EXPECT_EQ(config->topology_path, "/t.yaml");
  EXPECT_EQ(config->state_dir, "/tmp/state");
  EXPECT_EQ(config->solve_debounce.count(), 50);
  std::remove(path.c_str());
}

TEST(PathcompConfigTest, ErrorsNameTheFileAndKey) {
  const std::string path = WriteTemp(
      "replica_id: pc1\nlisten: localhost\nstate_dir: [x]\nsolve_debounce_ms: soon\n"
      "tls: {ca: ca.crt, cert: c.crt}\n");
  auto config = LoadPathcompConfig(path);
  ASSERT_FALSE(config.ok());
  const std::string message(config.status().message());
  EXPECT_THAT(message, HasSubstr(path + ":2: listen: expected host:port"));
  EXPECT_THAT(message, HasSubstr(path + ":3: state_dir: expected a string, got a list"));
  EXPECT_THAT(message, HasSubstr(path + ":1: topology: required key is missing"));
  EXPECT_THAT(message, HasSubstr(path + ":4: solve_debounce_ms: expected an unsigned integer"));
  EXPECT_THAT(message, HasSubstr(path + ":5: tls.key: required key is missing"));
  std::remove(path.c_str());
}

TEST(PathcompConfigTest, ListenAddressValidation) {
  EXPECT_TRUE(config::IsValidHostPort("127.0.0.1:0"));
  EXPECT_TRUE(config::IsValidHostPort("[::1]:7443"));
  EXPECT_FALSE(config::IsValidHostPort("127.0.0.1"));
  EXPECT_FALSE(config::IsValidHostPort(":80"));
  EXPECT_FALSE(config::IsValidHostPort("host:99999"));
  EXPECT_FALSE(config::IsValidHostPort("host:http"));
}

}  // namespace
}  // namespace geodesic::pathcomp
