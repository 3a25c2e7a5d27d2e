#pragma once
// Sends routerd's acknowledgements of plans to one pathcomp replica and keeps
// their "at the routers" part true. A plan acknowledged as installed but not
// yet sent to every router (PlanAck.sent_to_routers false: a BGP session was
// not established in time) is acknowledged again, now as sent to the
// routers, once they catch up (PlanInstaller::WaitSentToRouters: every
// session established and every UPDATE written) — unless another plan was
// installed or acknowledged meanwhile: its own acknowledgement speaks for the
// routers then. Without this, the controller would report the site "not at
// its routers" until the next plan, and anyone waiting for convergence would
// wait for a plan that may never come.
//
// Acknowledgements go out one at a time, in the order they were given: a
// catch-up for an older plan never reaches the replica after a newer plan's
// acknowledgement. A catch-up that cannot be delivered is tried again every
// `retry_interval` until delivered, superseded or stopped.
//
// Thread-safe. Owns one thread (the catch-up) from construction until Stop().
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "geodesic/v1/plan.pb.h"
#include "routerd/plan_installer.h"

namespace geodesic::routerd {

class PlanAcknowledger {
 public:
  // Delivers one acknowledgement to the replica; false when it did not get
  // there (the replica is unreachable). Called with no lock of the installer
  // held, one call at a time.
  using SendAck = std::function<bool(const v1::PlanAck&)>;

  PlanAcknowledger(PlanInstaller& installer, SendAck send,
                   std::chrono::milliseconds retry_interval = std::chrono::seconds(1));
  ~PlanAcknowledger();  // Stop()
  PlanAcknowledger(const PlanAcknowledger&) = delete;
  PlanAcknowledger& operator=(const PlanAcknowledger&) = delete;

  // Sends `ack` now (a failed delivery is not retried: the next watch's plan
  // is acknowledged anew). A catch-up pending for an earlier acknowledgement
  // is dropped. When `ack` says installed but not sent_to_routers, the
  // catch-up waits for the routers and acknowledges the plan again.
  void Acknowledge(const v1::PlanAck& ack);

  // Whether an acknowledgement is waiting for the routers to catch up (or
  // for its delivery to succeed).
  bool catching_up() const;

  // Stops the catch-up; one still pending is dropped. Waits for a delivery
  // in progress. Idempotent.
  void Stop();

 private:
  void CatchUpLoop();

  PlanInstaller& installer_;
  const SendAck send_;
  const std::chrono::milliseconds retry_interval_;

  mutable std::mutex mu_;  // held while sending: acknowledgements go out one at a time
  std::condition_variable cv_;
  bool stopping_ = false;
  std::optional<v1::PlanAck> pending_;  // installed, not yet at the routers
  std::thread thread_;
};

}  // namespace geodesic::routerd
