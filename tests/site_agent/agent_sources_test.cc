// The agent's measurement sources besides probing: interface counters for
// utilization and the fabric manager's plane health (file and local HTTP).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "site_agent/fabric_health_source.h"
#include "site_agent/interface_counters.h"
#include "site_agent/local_http.h"
#include "tests/support/test_dirs.h"

namespace geodesic::site_agent {
namespace {

using ::testing::HasSubstr;
using std::chrono::seconds;

using ::geodesic::testing::TempDir;

void WriteFile(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << content;
}

TEST(InterfaceCountersTest, UtilizationIsTheSentBitsOverTheCapacity) {
  const TempDir dir("sysfs");
  const std::string root = dir.path();
  WriteFile(root + "/eth1/speed", "100000\n");
  WriteFile(root + "/eth1/statistics/tx_bytes", "1000\n");
  InterfaceCounters counters(root);
  EXPECT_EQ(*counters.SpeedGbps("eth1"), 100.0);

  const auto start = std::chrono::steady_clock::time_point{} + seconds(10);
  EXPECT_EQ(counters.Sample("eth1", 100, start), std::nullopt);  // the first sample is a baseline
  // 25 Gbit in 1 s over 100 Gbps.
  WriteFile(root + "/eth1/statistics/tx_bytes", std::to_string(1000 + 25'000'000'000 / 8) + "\n");
  const std::optional<double> utilization = counters.Sample("eth1", 100, start + seconds(1));
  ASSERT_TRUE(utilization.has_value());
  EXPECT_NEAR(*utilization, 0.25, 1e-9);
  // A reset counter (the interface was re-created) gives no sample, then a fresh baseline.
  WriteFile(root + "/eth1/statistics/tx_bytes", "10\n");
  EXPECT_EQ(counters.Sample("eth1", 100, start + seconds(2)), std::nullopt);
  WriteFile(root + "/eth1/statistics/tx_bytes", std::to_string(10 + 1'250'000'000) + "\n");
  EXPECT_NEAR(*counters.Sample("eth1", 100, start + seconds(3)), 0.1, 1e-9);
}

TEST(InterfaceCountersTest, RefusesBadNamesAndUnknownSpeeds) {
  const TempDir dir("sysfs-bad");
  const std::string root = dir.path();
  WriteFile(root + "/veth0/speed", "-1\n");
  InterfaceCounters counters(root);
  EXPECT_EQ(counters.SpeedGbps("veth0").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(counters.SpeedGbps("eth9").status().code(), absl::StatusCode::kNotFound);
  for (const std::string name : {"", "..", "a/b", "eth 1", "a-name-far-too-long"}) {
    EXPECT_EQ(ValidateInterfaceName(name).code(), absl::StatusCode::kInvalidArgument) << name;
  }
  EXPECT_TRUE(ValidateInterfaceName("bond0.100").ok());
  EXPECT_EQ(counters.Sample("missing", 100, std::chrono::steady_clock::now()), std::nullopt);
}

constexpr FabricShape kShape{.planes = 4, .rails = 8};

TEST(FabricHealthTest, ParsesPlanesAndFailedRails) {
  auto planes = ParsePlaneHealth(
      "planes:\n  - {plane: 0, state: up}\n  - {plane: 2, state: degraded, failed_rails: [1, 6]}\n", "f", kShape);
  ASSERT_TRUE(planes.ok()) << planes.status();
  ASSERT_EQ(planes->size(), 2u);
  EXPECT_EQ((*planes)[1].plane(), 2u);
  EXPECT_EQ((*planes)[1].state(), v1::OPER_STATE_DEGRADED);
  EXPECT_THAT((*planes)[1].failed_rails(), ::testing::ElementsAre(1u, 6u));
}

TEST(FabricHealthTest, RefusesWhatDoesNotFitTheFabric) {
  const std::pair<std::string, std::string> cases[] = {
      {"planes:\n  - {plane: 4, state: up}\n", "f:2: planes[0].plane"},
      {"planes:\n  - {plane: 1, state: sideways}\n", "planes[0].state: expected up, degraded or down"},
      {"planes:\n  - {plane: 1, state: down, failed_rails: [8]}\n", "\"8\" is not a rail from 0 to 7"},
      {"planes:\n  - {plane: 1, state: down, failed_rails: [2, 2]}\n", "rail 2 is listed twice"},
      {"planes:\n  - {plane: 1, state: up}\n  - {plane: 1, state: down}\n", "plane 1 is listed twice"},
      {"planes:\n  - {plane: 1, state: up, colour: red}\n", "colour"},
      {"planes: [\n", "f"},
  };
  for (const auto& [text, expected] : cases) {
    auto planes = ParsePlaneHealth(text, "f", kShape);
    ASSERT_FALSE(planes.ok()) << text;
    EXPECT_THAT(planes.status().message(), HasSubstr(expected)) << text;
  }
}

TEST(FabricHealthTest, FileSourceReportsChangesAndIgnoresBadDocuments) {
  const TempDir dir("fabric");
  const std::string path = dir.Join("planes.yaml");
  auto source = FabricHealthSource::Create(path, kShape);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_TRUE(source->Poll(1).empty());  // no file yet: nothing known
  EXPECT_EQ(source->status().code(), absl::StatusCode::kNotFound);
  WriteFile(path, "planes:\n  - {plane: 0, state: up}\n  - {plane: 1, state: down}\n");
  EXPECT_EQ(source->Poll(2).size(), 2u);
  EXPECT_TRUE(source->Poll(3).empty());
  WriteFile(path, "planes:\n  - {plane: 0, state: up}\n  - {plane: 1, state: up}\n");
  auto changed = source->Poll(4);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].plane(), 1u);
  EXPECT_EQ(changed[0].measured_at_unix_ms(), 4);
  WriteFile(path, "planes:\n  - {plane: 9, state: down}\n");  // bad: changes nothing
  EXPECT_TRUE(source->Poll(5).empty());
  EXPECT_FALSE(source->status().ok());
  ASSERT_EQ(source->Current().size(), 2u);
  EXPECT_EQ(source->Current()[1].state(), v1::OPER_STATE_UP);
}

// Serves `body` with HTTP 200 to every connection on 127.0.0.1 (ephemeral port).
class TinyHttpServer {
 public:
  explicit TinyHttpServer(std::string body) : body_(std::move(body)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {htonl(INADDR_LOOPBACK)}, .sin_zero = {}};
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    socklen_t length = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      while (true) {
        const int client = ::accept(fd_, nullptr, nullptr);
        if (client < 0 || stopping_) {
          if (client >= 0) ::close(client);
          return;
        }
        char request[4096];
        (void)!::recv(client, request, sizeof request, 0);
        const std::string response = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body_.size()) +
                                     "\r\nConnection: close\r\n\r\n" + body_;
        (void)!::send(client, response.data(), response.size(), MSG_NOSIGNAL);
        ::close(client);
      }
    });
  }
  ~TinyHttpServer() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  std::string body_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

TEST(FabricHealthTest, ReadsALocalHttpEndpoint) {
  TinyHttpServer server(R"({"planes": [{"plane": 3, "state": "down", "failed_rails": [0]}]})");
  auto source = FabricHealthSource::Create("http://127.0.0.1:" + std::to_string(server.port()) + "/fabric", kShape);
  ASSERT_TRUE(source.ok()) << source.status();
  auto planes = source->Poll(7);
  ASSERT_EQ(planes.size(), 1u) << source->status();
  EXPECT_EQ(planes[0].plane(), 3u);
  EXPECT_EQ(planes[0].state(), v1::OPER_STATE_DOWN);
}

TEST(FabricHealthTest, OnlyLocalHttpEndpoints) {
  for (const std::string url : {"http://10.0.0.1:80/x", "https://127.0.0.1:443/x", "http://127.0.0.1/x",
                                "http://127.0.0.1:0/x", "http://127.0.0.1:70000/x", "http://[::1/x",
                                "http://127.0.0.1:8080/a b"}) {
    EXPECT_EQ(FabricHealthSource::Create(url, kShape).status().code(), absl::StatusCode::kInvalidArgument) << url;
  }
  EXPECT_TRUE(ParseLocalUrl("http://[::1]:8080/planes").ok());
  EXPECT_TRUE(ParseLocalUrl("http://localhost:8080").ok());
  // Nobody listens: unavailable, nothing reported.
  auto source = FabricHealthSource::Create("http://127.0.0.1:1/none", kShape);
  ASSERT_TRUE(source.ok());
  EXPECT_TRUE(source->Poll(1).empty());
  EXPECT_EQ(source->status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace geodesic::site_agent
