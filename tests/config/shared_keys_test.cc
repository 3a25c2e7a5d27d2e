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

// Reads the `metrics` key of `text` with these TLS files; the errors, if any.
std::pair<std::optional<daemon::AdminServerOptions>, std::string> ReadMetrics(const std::string& text) {
  auto reader = ConfigReader::FromString(text, "/etc/geodesic/routerd.yaml");
  EXPECT_TRUE(reader.ok()) << reader.status();
  auto options = ReadMetricsListen(*reader, {.ca_path = "ca.crt", .cert_path = "d.crt", .key_path = "d.key"});
  reader->RejectUnknownKeys();
  return {options, std::string(reader->status().message())};
}

TEST(MetricsKeyTest, AbsentMeansNoAdminListener) {
  EXPECT_EQ(ReadMetrics("other: 1\n").first, std::nullopt);
}

TEST(MetricsKeyTest, PlainHttpOnLoopbackByDefault) {
  auto [options, errors] = ReadMetrics("metrics: {listen: 127.0.0.1:0, address_file: /run/m.addr}\n");
  EXPECT_EQ(errors, "");
  ASSERT_TRUE(options.has_value());
  EXPECT_EQ(options->listen, "127.0.0.1:0");
  EXPECT_EQ(options->address_file, "/run/m.addr");
  EXPECT_FALSE(options->tls.has_value());
  EXPECT_EQ(ReadMetrics("metrics: {listen: \"[::1]:9482\"}\n").second, "");
}

TEST(MetricsKeyTest, ARemoteAddressNeedsTlsOrAnExplicitChoice) {
  EXPECT_THAT(ReadMetrics("metrics: {listen: 0.0.0.0:9482}\n").second,
              HasSubstr("metrics.listen: plain HTTP has no authentication"));
  EXPECT_EQ(ReadMetrics("metrics: {listen: 0.0.0.0:9482, allow_remote_plain_http: true}\n").second, "");
  auto [options, errors] = ReadMetrics("metrics: {listen: 10.0.0.1:9482, tls: true}\n");
  EXPECT_EQ(errors, "");
  ASSERT_TRUE(options && options->tls);
  EXPECT_EQ(options->tls->cert_path, "d.crt");
  EXPECT_EQ(options->tls->ca_path, "ca.crt");
  EXPECT_TRUE(options->tls->require_client_cert);
  auto open = ReadMetrics("metrics: {listen: 10.0.0.1:9482, tls: true, require_client_cert: false}\n").first;
  ASSERT_TRUE(open && open->tls);
  EXPECT_FALSE(open->tls->require_client_cert);
}

TEST(MetricsKeyTest, ErrorsNameTheKey) {
  EXPECT_THAT(ReadMetrics("metrics: {}\n").second, HasSubstr("metrics.listen: required key is missing"));
  EXPECT_THAT(ReadMetrics("metrics: {listen: nowhere:1}\n").second, HasSubstr("metrics.listen: \"nowhere\""));
  EXPECT_THAT(ReadMetrics("metrics: {listen: 127.0.0.1:1, require_client_cert: true}\n").second,
              HasSubstr("metrics.require_client_cert: only means something with tls: true"));
  EXPECT_THAT(ReadMetrics("metrics: {listen: 127.0.0.1:1, tls: maybe}\n").second, HasSubstr("metrics.tls"));
  EXPECT_THAT(ReadMetrics("metrics: {listen: 127.0.0.1:1, path: /m}\n").second, HasSubstr("metrics.path: unknown key"));
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
