#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>

#include "local_events/local_event_listener.h"
#include "local_events/local_event_sender.h"
#include "sim/wait_until.h"
#include "tests/support/test_dirs.h"

namespace geodesic::local_events {
namespace {

using std::chrono::milliseconds;

// The shared bounded poll (sim::WaitUntil), every 2 ms for at most 5 s.
absl::Status WaitFor(const std::string& what, const std::function<bool()>& condition) {
  return sim::WaitUntil(what, milliseconds(5000), condition, milliseconds(2));
}

v1::LinkReport Report(const std::string& link_id, v1::OperState state) {
  v1::LinkReport report;
  report.set_link_id(link_id);
  report.mutable_health()->set_state(state);
  return report;
}

class LocalEventsTest : public ::testing::Test {
 protected:
  void SetUp() override { socket_path_ = dir_.Join("routerd.sock"); }

  std::unique_ptr<LocalEventListener> StartListener(size_t max_message_bytes = 256 * 1024) {
    auto listener = std::make_unique<LocalEventListener>(
        ListenerOptions{.socket_path = socket_path_,
                        .facility_id = "iad",
                        .link_ids = {"iad-nyc", "iad-chi"},
                        .max_message_bytes = max_message_bytes},
        [this](const v1::LocalLinkEvents& events) {
          std::lock_guard lock(mu_);
          received_.push_back(events);
        });
    EXPECT_TRUE(listener->Start().ok());
    return listener;
  }
  std::vector<v1::LocalLinkEvents> Received() {
    std::lock_guard lock(mu_);
    return received_;
  }
  // Connects a raw client and sends `bytes` as one message.
  void SendRaw(const std::vector<std::string>& messages) {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, socket_path_.c_str());
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    for (const std::string& bytes : messages) ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    char byte;
    ::recv(fd, &byte, 1, 0);  // returns when the listener ends the connection
    ::close(fd);
  }
  static std::string Message(const std::string& facility, uint64_t seq, bool snapshot,
                             const std::vector<v1::LinkReport>& links = {}) {
    v1::LocalLinkEvents message;
    message.set_facility_id(facility);
    message.set_incarnation(7);
    message.set_seq(seq);
    message.set_snapshot(snapshot);
    for (const auto& link : links) *message.add_links() = link;
    return message.SerializeAsString();
  }

  testing::TempDir dir_{"local-events"};
  std::string socket_path_;
  std::mutex mu_;
  std::vector<v1::LocalLinkEvents> received_;
};

TEST_F(LocalEventsTest, SnapshotThenEveryChangeAtOnce) {
  auto listener = StartListener();
  LocalEventSender sender({.socket_path = socket_path_, .facility_id = "iad", .incarnation = 7,
                           .retry_interval = milliseconds(20)});
  sender.Publish({Report("iad-nyc", v1::OPER_STATE_UP), Report("iad-chi", v1::OPER_STATE_UP)});
  sender.Start();
  ASSERT_EQ(WaitFor("one report received", [&] { return Received().size() == 1; }), absl::OkStatus());
  EXPECT_TRUE(Received()[0].snapshot());
  EXPECT_EQ(Received()[0].links_size(), 2);
  sender.Publish({Report("iad-chi", v1::OPER_STATE_DOWN)});
  ASSERT_EQ(WaitFor("two reports received", [&] { return Received().size() == 2; }), absl::OkStatus());
  const v1::LocalLinkEvents delta = Received()[1];
  EXPECT_FALSE(delta.snapshot());
  EXPECT_EQ(delta.seq(), 2u);
  ASSERT_EQ(delta.links_size(), 1);
  EXPECT_EQ(delta.links(0).health().state(), v1::OPER_STATE_DOWN);
  EXPECT_EQ(listener->counters().messages, 2u);
}

TEST_F(LocalEventsTest, ARestartedRouterdGetsAFreshSnapshotWithWhatChangedMeanwhile) {
  LocalEventSender sender({.socket_path = socket_path_, .facility_id = "iad", .incarnation = 7,
                           .retry_interval = milliseconds(20)});
  sender.Start();
  sender.Publish({Report("iad-nyc", v1::OPER_STATE_UP)});  // nobody listens yet
  auto listener = StartListener();
  ASSERT_EQ(WaitFor("one report received", [&] { return Received().size() == 1; }), absl::OkStatus());
  listener.reset();  // routerd goes away
  ASSERT_EQ(WaitFor("the sender to see the listener gone", [&] { return !sender.connected(); }), absl::OkStatus());
  sender.Publish({Report("iad-nyc", v1::OPER_STATE_DOWN)});
  listener = StartListener();
  ASSERT_EQ(WaitFor("two reports received", [&] { return Received().size() == 2; }), absl::OkStatus());
  const v1::LocalLinkEvents snapshot = Received()[1];
  EXPECT_TRUE(snapshot.snapshot());
  EXPECT_EQ(snapshot.seq(), 1u);
  ASSERT_EQ(snapshot.links_size(), 1);
  EXPECT_EQ(snapshot.links(0).health().state(), v1::OPER_STATE_DOWN);
}

TEST_F(LocalEventsTest, BadMessagesAreCountedAndChangeNothing) {
  auto listener = StartListener(/*max_message_bytes=*/4096);
  SendRaw({"not a protobuf \xff\xff\xff"});
  SendRaw({Message("nyc", 1, true)});
  SendRaw({Message("iad", 1, false)});                         // a delta first
  SendRaw({Message("iad", 1, true), Message("iad", 3, false)});  // a gap
  SendRaw({Message("iad", 1, true, {Report("nyc-chi", v1::OPER_STATE_DOWN)})});
  SendRaw({std::string(5000, 'x')});
  const ListenerCounters counters = listener->counters();
  EXPECT_EQ(counters.malformed, 1u);
  EXPECT_EQ(counters.wrong_facility, 1u);
  EXPECT_EQ(counters.out_of_order, 2u);
  EXPECT_EQ(counters.unknown_link, 1u);
  EXPECT_EQ(counters.oversized, 1u);
  EXPECT_EQ(counters.messages, 1u);  // only the snapshot before the gap
  EXPECT_EQ(Received().size(), 1u);
}

TEST_F(LocalEventsTest, RefusesAnotherUsersProcess) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another user";
  auto listener = StartListener();
  std::filesystem::permissions(dir_.path(), std::filesystem::perms::all);
  // The socket file is 0660: make it reachable so the credential check is what refuses.
  std::filesystem::permissions(socket_path_, std::filesystem::perms::all);
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, socket_path_.c_str());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) ::_exit(3);
    const std::string bytes = Message("iad", 1, true);
    ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  ASSERT_EQ(WaitFor("the stranger to be rejected", [&] { return listener->counters().rejected_peer == 1; }), absl::OkStatus());
  EXPECT_EQ(listener->counters().messages, 0u);
}

TEST_F(LocalEventsTest, RefusesAPathThatIsNotAStaleSocket) {
  std::ofstream(socket_path_) << "a file";
  LocalEventListener listener({.socket_path = socket_path_, .facility_id = "iad"}, [](const auto&) {});
  EXPECT_EQ(listener.Start().code(), absl::StatusCode::kFailedPrecondition);
  std::filesystem::remove(socket_path_);
  auto live = StartListener();
  LocalEventListener second({.socket_path = socket_path_, .facility_id = "iad"}, [](const auto&) {});
  EXPECT_EQ(second.Start().code(), absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace geodesic::local_events
