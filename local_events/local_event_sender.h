#pragma once
// The site agent's end of the local channel to its facility's routerd (see
// LocalEventListener): keeps a connection to the socket, opens every
// connection with a snapshot of all links and then sends each change at
// once. Level-triggered: while routerd is away nothing queues; the snapshot
// of the next connection carries whatever changed meanwhile. Thread-safe;
// one thread between Start() and Stop().
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "geodesic/v1/telemetry.pb.h"

namespace geodesic::local_events {

struct SenderOptions {
  std::string socket_path;
  std::string facility_id;
  uint64_t incarnation = 1;  // the agent's, non-zero
  std::chrono::milliseconds retry_interval{200};
};

class LocalEventSender {
 public:
  explicit LocalEventSender(SenderOptions options);
  ~LocalEventSender();  // Stop()s
  LocalEventSender(const LocalEventSender&) = delete;
  LocalEventSender& operator=(const LocalEventSender&) = delete;

  void Start();
  void Stop();

  // Records these links' health and sends it now if connected.
  void Publish(const std::vector<v1::LinkReport>& links);

  bool connected() const;
  uint64_t messages_sent() const;

 private:
  void Run();
  bool ConnectLocked();
  bool SendLocked(v1::LocalLinkEvents& message);

  const SenderOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, v1::LinkReport> current_;  // every link's last health
  std::vector<v1::LinkReport> pending_;           // changes not yet sent
  int fd_ = -1;
  uint64_t next_seq_ = 1;
  uint64_t messages_sent_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace geodesic::local_events
