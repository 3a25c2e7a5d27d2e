// The daemons' health endpoints answer what each daemon really knows, as real
// processes on loopback: routerd is ready once a plan is installed and stays
// ready (fail-static) when the controller goes away; the agent is ready while
// a report session is open; pathcomp is ready once its model is loaded.
// Every wait is a bounded poll of an endpoint (sim/wait_until.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <iostream>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "sim/make_pki.h"
#include "sim/process.h"
#include "sim/wait_until.h"
#include "tests/support/test_dirs.h"

namespace geodesic {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

constexpr std::chrono::seconds kDeadline{30};

struct Answer {
  unsigned status = 0;  // 0: no answer (not listening yet, or gone)
  std::string body;
};

// GET http://127.0.0.1:port/target, bounded by a 2 s deadline.
Answer Get(int port, const std::string& target) {
  try {
    asio::io_context io;
    beast::tcp_stream stream(io);
    stream.expires_after(std::chrono::seconds(2));
    stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)));
    http::request<http::empty_body> request(http::verb::get, target, 11);
    request.set(http::field::host, "127.0.0.1");
    http::write(stream, request);
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
    return {response.result_int(), response.body()};
  } catch (const boost::system::system_error&) {
    return {};
  }
}

class HealthEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.path();
    ASSERT_TRUE(sim::RunMakePki(dir_ + "/pki", {"--facilities", "iad", "--replicas", "pc1"}).ok());
    for (int* port : {&pathcomp_health_, &agent_health_, &routerd_health_, &pathcomp_port_}) {
      auto free = sim::FreePort(SOCK_STREAM);
      ASSERT_TRUE(free.ok()) << free.status();
      *port = *free;
    }
    const std::string pki = dir_ + "/pki/";
    const std::string replicas = "pathcomp: [{address: 127.0.0.1:" + std::to_string(pathcomp_port_) + "}]\n";
    temp_.Write("pathcomp.yaml", "replica_id: pc1\nlisten: 127.0.0.1:" + std::to_string(pathcomp_port_) +
                                     "\nstate_dir: state/pathcomp\ntopology: " + testing::Backbone() +
                                     "\ntls: {ca: pki/ca.crt, cert: pki/pathcomp-pc1.crt, key: pki/pathcomp-pc1.key}\n"
                                     "solve_debounce_ms: 20\nhealth: {listen: 127.0.0.1:" +
                                     std::to_string(pathcomp_health_) + "}\n");
    temp_.Write("agent.yaml", "facility: iad\n" + replicas +
                                  "tls: {ca: pki/ca.crt, cert: pki/site-iad-agent.crt, key: pki/site-iad-agent.key}\n"
                                  "poll_interval_ms: 20\nlinks: [{id: iad-chi}, {id: iad-nyc}]\n"
                                  "health: {listen: 127.0.0.1:" + std::to_string(agent_health_) + "}\n");
    temp_.Write("routerd.yaml", "facility: iad\n" + replicas +
                                    "tls: {ca: pki/ca.crt, cert: pki/site-iad-routerd.crt, key: pki/site-iad-routerd.key}\n"
                                    "state_dir: state/routerd\nhealth: {listen: 127.0.0.1:" +
                                    std::to_string(routerd_health_) + "}\n");
  }

  sim::ChildProcessPtr Start(const std::string& daemon, const std::string& config) {
    auto child = sim::ChildProcess::Spawn({testing::BinaryDir() + "/bin/" + daemon, "--config", temp_.Join(config)},
                                          temp_.Join(daemon + ".log"));
    EXPECT_TRUE(child.ok()) << child.status();
    return child.ok() ? *std::move(child) : nullptr;
  }

  // Waits until GET port/target answers `status` with a body containing
  // `reason` (the daemon answers "starting" until it is up).
  void ExpectAnswer(int port, const std::string& target, unsigned status, const std::string& reason) {
    Answer last;
    const absl::Status waited = sim::WaitUntil(
        target + " on port " + std::to_string(port) + " answering " + std::to_string(status) + " " + reason,
        kDeadline, [&] {
          last = Get(port, target);
          return last.status == status && last.body.find(reason) != std::string::npos;
        });
    EXPECT_TRUE(waited.ok()) << waited << "; last answer " << last.status << " " << last.body;
  }

  // On failure the daemons' logs go to the test's output; the directory is
  // removed either way.
  void TearDown() override {
    if (!HasFailure()) return;
    for (const char* daemon : {"pathcomp", "site_agent", "routerd"}) {
      std::ifstream log(temp_.Join(std::string(daemon) + ".log"));
      if (!log || log.peek() == std::ifstream::traits_type::eof()) continue;  // not started
      std::cout << "---- " << daemon << ".log\n" << log.rdbuf() << "\n";
    }
  }

  testing::TempDir temp_{"health-endpoint"};
  std::string dir_;
  int pathcomp_port_ = 0, pathcomp_health_ = 0, agent_health_ = 0, routerd_health_ = 0;
};

TEST_F(HealthEndpointTest, ReadinessFollowsWhatEachDaemonKnows) {
  // Without a controller: alive, not ready.
  sim::ChildProcessPtr routerd = Start("routerd", "routerd.yaml");
  sim::ChildProcessPtr agent = Start("site_agent", "agent.yaml");
  ASSERT_TRUE(routerd && agent);
  ExpectAnswer(routerd_health_, "/readyz", 503, "no plan installed yet; 0 of 1 controllers");
  ExpectAnswer(agent_health_, "/readyz", 503, "no report session open to any of 1");
  ExpectAnswer(routerd_health_, "/healthz", 200, "fail-static watchdog loop ran");
  ExpectAnswer(agent_health_, "/healthz", 200, "report loop ran");

  // The controller comes: every daemon turns ready.
  sim::ChildProcessPtr pathcomp = Start("pathcomp", "pathcomp.yaml");
  ASSERT_TRUE(pathcomp);
  ExpectAnswer(pathcomp_health_, "/readyz", 200, "standalone; model loaded");
  ExpectAnswer(pathcomp_health_, "/healthz", 200, "intent expiry loop ran");
  ExpectAnswer(agent_health_, "/readyz", 200, "reporting to 1 of 1");
  ExpectAnswer(routerd_health_, "/readyz", 200, "installed; 1 of 1 controllers");

  // It goes away: routerd keeps its plan (fail-static) and stays ready; the
  // agent has nobody to report to.
  pathcomp->Signal(SIGKILL);
  ASSERT_TRUE(pathcomp->Wait(10'000).has_value());
  ExpectAnswer(routerd_health_, "/readyz", 200, "installed (fail-static); 0 of 1");
  ExpectAnswer(agent_health_, "/readyz", 503, "no report session open");
  EXPECT_EQ(Get(routerd_health_, "/metrics").status, 404u);

  EXPECT_EQ(routerd->Stop(), 0);
  EXPECT_EQ(agent->Stop(), 0);
}

}  // namespace
}  // namespace geodesic
