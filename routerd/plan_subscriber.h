#pragma once
// Watches one pathcomp replica's plan for this facility, offers every plan to
// the installer and acknowledges the result. Reconnects with backoff and
// jitter; while no controller is reachable, the installed routes stay (fail-static).
// A watch counts as contact once the replica answered it (its initial metadata).
// An installed plan is acknowledged once its routes were sent to every router
// (PlanAck.sent_to_routers), or after kSentToRoutersTimeout without that; then
// it is acknowledged again when the routers catch up (plan_acknowledger.h).
// Thread-safe. Owns one thread between Start() and Stop(), and the
// acknowledger's catch-up thread from construction until Stop().
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "routerd/fail_static.h"
#include "routerd/plan_acknowledger.h"
#include "routerd/plan_installer.h"

namespace geodesic::routerd {

class PlanSubscriber {
 public:
  PlanSubscriber(std::string facility_id, std::string address,
                 std::shared_ptr<grpc::ChannelCredentials> credentials, PlanInstaller& installer,
                 ControllerContact* contact = nullptr);
  ~PlanSubscriber();

  void Start();
  void Stop();

 private:
  void Run();
  // One watch; returns true when the stream delivered at least one plan.
  bool WatchOnce();
  // Waits (at most kSentToRoutersTimeout, less when stopping) until the
  // routers have every installed route.
  bool WaitSentToRouters();
  static constexpr std::chrono::seconds kSentToRoutersTimeout{10};
  // Delivers one acknowledgement to the replica (PlanAcknowledger::SendAck).
  bool SendAck(const v1::PlanAck& ack);

  const std::string facility_id_;
  const std::string address_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  PlanInstaller& installer_;
  ControllerContact* const contact_;  // told while a watch stream is open; may be null

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  grpc::ClientContext* live_context_ = nullptr;
  PlanAcknowledger acks_;
  std::thread thread_;
};

}  // namespace geodesic::routerd
