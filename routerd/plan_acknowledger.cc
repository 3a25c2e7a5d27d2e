#include "routerd/plan_acknowledger.h"

#include <string>

#include "daemon/log.h"

namespace geodesic::routerd {
namespace {

// How long the catch-up waits on the routers before it looks again whether
// it was stopped or superseded.
constexpr std::chrono::milliseconds kRoutersSlice{100};

bool SamePlan(const v1::PlanAck& a, const v1::PlanAck& b) {
  return a.generation() == b.generation() && a.epoch() == b.epoch();
}

}  // namespace

PlanAcknowledger::PlanAcknowledger(PlanInstaller& installer, SendAck send, std::chrono::milliseconds retry_interval)
    : installer_(installer), send_(std::move(send)), retry_interval_(retry_interval) {
  thread_ = std::thread([this] { CatchUpLoop(); });
}

PlanAcknowledger::~PlanAcknowledger() { Stop(); }

void PlanAcknowledger::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    pending_.reset();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PlanAcknowledger::Acknowledge(const v1::PlanAck& ack) {
  std::lock_guard lock(mu_);
  pending_.reset();
  (void)send_(ack);  // the sender logs a failure; the next watch acknowledges anew
  if (ack.installed() && !ack.sent_to_routers() && !stopping_) {
    pending_ = ack;
    cv_.notify_all();
  }
}

bool PlanAcknowledger::catching_up() const {
  std::lock_guard lock(mu_);
  return pending_.has_value();
}

void PlanAcknowledger::CatchUpLoop() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || pending_.has_value(); });
    if (stopping_) return;
    const v1::PlanAck waiting_for = *pending_;
    // Not under mu_: a newer plan's acknowledgement must not wait for the routers.
    lock.unlock();
    const bool at_routers = installer_.WaitSentToRouters(std::chrono::steady_clock::now() + kRoutersSlice);
    const v1::SitePlan installed = installer_.installed();
    lock.lock();
    if (stopping_) return;
    if (!at_routers || !pending_ || !SamePlan(*pending_, waiting_for)) continue;
    if (installed.generation() != waiting_for.generation() || installed.epoch() != waiting_for.epoch()) {
      pending_.reset();  // another plan (or none, after expiry) is installed: its acknowledgement counts
      continue;
    }
    v1::PlanAck caught_up = waiting_for;
    caught_up.set_sent_to_routers(true);
    caught_up.clear_error();
    if (send_(caught_up)) {
      daemon::LogInfo("plan now at every router; acknowledged again",
                      {{"generation", std::to_string(caught_up.generation())},
                       {"epoch", std::to_string(caught_up.epoch())}});
      pending_.reset();
      continue;
    }
    // Undelivered: try again later, unless stopped or superseded meanwhile.
    cv_.wait_for(lock, retry_interval_,
                 [&] { return stopping_ || !pending_ || !SamePlan(*pending_, waiting_for); });
  }
}

}  // namespace geodesic::routerd
