#include "routerd/plan_subscriber.h"

#include <random>

#include "daemon/log.h"
#include "geodesic/v1/plan.grpc.pb.h"

namespace geodesic::routerd {
namespace {

constexpr const char* kPlanWatchMetadataKey = "geodesic-plan-watch";  // see plan.proto

}  // namespace

PlanSubscriber::PlanSubscriber(std::string facility_id, std::string address,
                               std::shared_ptr<grpc::ChannelCredentials> credentials,
                               PlanInstaller& installer, ControllerContact* contact)
    : facility_id_(std::move(facility_id)),
      address_(std::move(address)),
      credentials_(std::move(credentials)),
      installer_(installer),
      contact_(contact),
      acks_(installer, [this](const v1::PlanAck& ack) { return SendAck(ack); }) {}

PlanSubscriber::~PlanSubscriber() { Stop(); }

void PlanSubscriber::Start() { thread_ = std::thread([this] { Run(); }); }

void PlanSubscriber::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (live_context_ != nullptr) live_context_->TryCancel();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PlanSubscriber::Run() {
  std::mt19937_64 random(std::random_device{}());
  constexpr std::chrono::milliseconds kMinBackoff{100}, kMaxBackoff{5000};
  auto backoff = kMinBackoff;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    if (WatchOnce()) backoff = kMinBackoff;
    if (std::lock_guard lock(mu_); stopping_) return;
    const auto installed = installer_.installed();
    daemon::LogWarn("controller unreachable, keeping installed routes (fail-static)",
                    {{"replica", address_},
                     {"installed_generation", std::to_string(installed.generation())},
                     {"routes", std::to_string(installed.routes_size())}});
    std::uniform_int_distribution<int64_t> jitter(backoff.count() / 2, backoff.count());
    const auto wait = std::chrono::milliseconds(jitter(random));
    backoff = std::min(kMaxBackoff, backoff * 2);
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, wait, [this] { return stopping_; })) return;
  }
}

bool PlanSubscriber::WaitSentToRouters() {
  const auto give_up = std::chrono::steady_clock::now() + kSentToRoutersTimeout;
  while (true) {
    const auto slice = std::min(give_up, std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
    if (installer_.WaitSentToRouters(slice)) return true;
    if (std::chrono::steady_clock::now() >= give_up) return false;
    if (std::lock_guard lock(mu_); stopping_) return false;
  }
}

bool PlanSubscriber::SendAck(const v1::PlanAck& ack) {
  auto stub = v1::PlanService::NewStub(grpc::CreateChannel(address_, credentials_));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::PlanAckResponse response;
  const grpc::Status status = stub->Ack(&context, ack, &response);
  if (!status.ok()) {
    daemon::LogWarn("plan ack failed", {{"replica", address_},
                                        {"generation", std::to_string(ack.generation())},
                                        {"error", status.error_message()}});
  }
  return status.ok();
}

bool PlanSubscriber::WatchOnce() {
  auto stub = v1::PlanService::NewStub(grpc::CreateChannel(address_, credentials_));
  grpc::ClientContext context;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    live_context_ = &context;
  }
  v1::WatchPlanRequest request;
  request.set_facility_id(facility_id_);
  request.set_known_generation(installer_.installed().generation());
  auto reader = stub->Watch(&context, request);
  reader->WaitForInitialMetadata();
  const bool answered = context.GetServerInitialMetadata().contains(kPlanWatchMetadataKey);
  if (answered && contact_ != nullptr) contact_->Connected(address_, std::chrono::steady_clock::now());
  bool delivered = false;
  v1::SitePlan plan;
  while (reader->Read(&plan)) {
    delivered = true;
    auto verdict = installer_.Offer(plan);
    v1::PlanAck ack;
    ack.set_facility_id(facility_id_);
    ack.set_generation(plan.generation());
    ack.set_epoch(plan.epoch());
    if (!verdict.ok()) {
      ack.set_installed(false);
      ack.set_error(std::string(verdict.status().message()));
      daemon::LogError("plan refused", {{"generation", std::to_string(plan.generation())},
                                        {"error", ack.error()}});
    } else if (*verdict == PlanVerdict::kFencedOff) {
      ack.set_installed(false);
      ack.set_error("fenced off: a higher controller epoch was seen");
      daemon::LogWarn("plan from an old epoch refused",
                      {{"epoch", std::to_string(plan.epoch())},
                       {"highest_epoch", std::to_string(installer_.highest_epoch())}});
    } else {
      ack.set_installed(true);
      // Acknowledged as installed at the routers only once they were sent it
      // (with BGP: every session established and every UPDATE written).
      ack.set_sent_to_routers(*verdict == PlanVerdict::kInstalled && WaitSentToRouters());
      if (!ack.sent_to_routers()) {
        ack.set_error("not yet sent to every router (a BGP session is not established); acknowledged again once it is");
      }
    }
    if (!verdict.ok() || *verdict != PlanVerdict::kStale) acks_.Acknowledge(ack);
  }
  const grpc::Status status = reader->Finish();
  if (answered && contact_ != nullptr) contact_->Disconnected(address_, std::chrono::steady_clock::now());
  {
    std::lock_guard lock(mu_);
    live_context_ = nullptr;
  }
  if (!status.ok()) {
    daemon::LogWarn("plan watch ended", {{"replica", address_},
                                         {"code", std::to_string(status.error_code())},
                                         {"error", status.error_message()}});
  }
  return delivered;
}

}  // namespace geodesic::routerd
