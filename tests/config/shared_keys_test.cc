#include "config/shared_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace geodesic::config {
namespace {

using ::testing::HasSubstr;

// Reads the `health` key of `text` the way every daemon does; the errors, if any.
std::pair<std::string, std::string> ReadHealth(const std::string& text) {
  auto reader = ConfigReader::FromString(text, "/etc/geodesic/routerd.yaml");
  EXPECT_TRUE(reader.ok()) << reader.status();
  const std::string listen = ReadHealthListen(*reader);
  reader->RejectUnknownKeys();
  return {listen, std::string(reader->status().message())};
}

TEST(HealthKeyTest, AbsentMeansNoEndpoint) {
  EXPECT_EQ(ReadHealth("other: 1\n").first, "");
}

TEST(HealthKeyTest, AcceptsAnIpAndAFixedPort) {
  EXPECT_EQ(ReadHealth("health: {listen: 0.0.0.0:7482}\n").first, "0.0.0.0:7482");
  EXPECT_EQ(ReadHealth("health: {listen: \"[::1]:7482\"}\n").first, "[::1]:7482");
  EXPECT_EQ(ReadHealth("health: {listen: 127.0.0.1:7482}\n").second, "");
}

TEST(HealthKeyTest, ErrorsNameTheFileLineAndKey) {
  EXPECT_THAT(ReadHealth("a: 1\nhealth: {listen: localhost:7482}\n").second,
              HasSubstr("/etc/geodesic/routerd.yaml:2: health.listen: \"localhost\" is not an IP address"));
  EXPECT_THAT(ReadHealth("health: {listen: 127.0.0.1:0}\n").second,
              HasSubstr("health.listen: port 0 is not allowed here: probes need a fixed port"));
  EXPECT_THAT(ReadHealth("health: {listen: 127.0.0.1:99999}\n").second, HasSubstr("health.listen: \"99999\" is not a port"));
  EXPECT_THAT(ReadHealth("health: {}\n").second, HasSubstr("health.listen: required key is missing"));
  EXPECT_THAT(ReadHealth("health: {listen: 127.0.0.1:1, port: 2}\n").second, HasSubstr("health.port: unknown key"));
  EXPECT_THAT(ReadHealth("health: 7482\n").second, HasSubstr("health"));
}

}  // namespace
}  // namespace geodesic::config
