#pragma once
// routerd's end of the local channel from its facility's site agent (see
// LocalLinkEvents in telemetry.proto): a Unix seqpacket socket that only
// processes of allowed users may use (the socket file is 0660 and every
// connection's peer credentials are checked), carrying one LocalLinkEvents
// per message. A connection must open with a snapshot for this facility and
// number its messages without gaps; anything else (wrong user, facility,
// order, unknown link, oversized or malformed message) is counted, ends the
// connection and changes nothing: the agent reconnects and starts over with
// a snapshot. Thread-safe; one thread between Start() and Stop().
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "geodesic/v1/telemetry.pb.h"

namespace geodesic::local_events {

struct ListenerOptions {
  std::string socket_path;
  std::string facility_id;
  std::set<std::string> link_ids{};  // the facility's links, others are refused; empty: any valid id
  std::vector<uid_t> allowed_uids{};  // empty: only this process's user
  // Larger messages are refused (a snapshot of 1,000 links is ~60 KB).
  size_t max_message_bytes = 256 * 1024;
};

struct ListenerCounters {
  uint64_t messages = 0;  // accepted
  uint64_t connections = 0;
  uint64_t rejected_peer = 0;  // a user not allowed
  uint64_t malformed = 0;
  uint64_t oversized = 0;
  uint64_t wrong_facility = 0;
  uint64_t out_of_order = 0;  // no snapshot first, or a sequence gap
  uint64_t unknown_link = 0;
};

class LocalEventListener {
 public:
  using Handler = std::function<void(const v1::LocalLinkEvents&)>;

  LocalEventListener(ListenerOptions options, Handler handler);
  ~LocalEventListener();  // Stop()s
  LocalEventListener(const LocalEventListener&) = delete;
  LocalEventListener& operator=(const LocalEventListener&) = delete;

  // Binds the socket (replacing a stale socket file, refusing a path that is
  // something else or that another listener holds) and starts serving.
  [[nodiscard]] absl::Status Start();
  void Stop();

  ListenerCounters counters() const;

 private:
  struct Connection;
  void Serve();
  // False when the connection must end.
  bool Receive(Connection& connection);

  const ListenerOptions options_;
  const Handler handler_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::string receive_buffer_;  // the serving thread's
  struct AtomicCounters;
  std::unique_ptr<AtomicCounters> counters_;
};

}  // namespace geodesic::local_events
