#include "pathcomp/replication/leader_election.h"

#include "daemon/log.h"

namespace geodesic::pathcomp {

LeaderElection::LeaderElection(EtcdClient& etcd, ElectionOptions options, Listener listener)
    : etcd_(etcd), options_(std::move(options)), listener_(std::move(listener)) {}

LeaderElection::~LeaderElection() { Stop(); }

void LeaderElection::Start() {
  campaign_thread_ = std::thread([this] { CampaignLoop(); });
  keepalive_thread_ = std::thread([this] { KeepAliveLoop(); });
}

void LeaderElection::Stop() {
  std::optional<LeaderKey> resign;
  int64_t lease = 0;
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !campaign_thread_.joinable()) return;
    stopping_ = true;
    if (campaign_context_ != nullptr) campaign_context_->TryCancel();
  }
  cv_.notify_all();
  if (campaign_thread_.joinable()) campaign_thread_.join();
  if (keepalive_thread_.joinable()) keepalive_thread_.join();
  {
    std::lock_guard lock(mu_);
    resign = leading_;
    lease = lease_;
    leading_.reset();
    pending_.clear();
  }
  if (resign && listener_) listener_(std::nullopt);
  if (resign) (void)etcd_.Resign(*resign);
  if (lease != 0) (void)etcd_.RevokeLease(lease);
}

std::optional<uint64_t> LeaderElection::LeadingEpoch(Clock::time_point now) const {
  std::lock_guard lock(mu_);
  if (!leading_ || lease_lost_ || now >= lease_valid_until_) return std::nullopt;
  return static_cast<uint64_t>(leading_->revision);
}

bool LeaderElection::LeaseAlive(Clock::time_point now) const {
  std::lock_guard lock(mu_);
  return lease_ != 0 && !lease_lost_ && now < lease_valid_until_;
}

std::optional<LeaderKey> LeaderElection::leader_key() const {
  std::lock_guard lock(mu_);
  return leading_;
}

std::string LeaderElection::CurrentLeader() const {
  auto leader = etcd_.Leader(options_.election);
  return leader.ok() ? leader->first : "";
}

void LeaderElection::StepDown(const std::string& why) {
  if (!leading_) return;
  daemon::LogWarn("leadership lost; no more plans from this replica",
                  {{"epoch", std::to_string(leading_->revision)}, {"why", why}});
  leading_.reset();
  cv_.notify_all();
  pending_.push_back(std::nullopt);
}

void LeaderElection::Notify(std::unique_lock<std::mutex>& lock) {
  // Outside the lock: the listener may ask LeadingEpoch, or take locks of its
  // own that are held while LeadingEpoch is called.
  while (!pending_.empty()) {
    const std::optional<uint64_t> epoch = pending_.front();
    pending_.pop_front();
    lock.unlock();
    if (listener_) listener_(epoch);
    lock.lock();
  }
}

void LeaderElection::KeepAliveLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const int64_t lease = lease_;
    if (lease != 0 && !lease_lost_) {
      lock.unlock();
      const auto sent = Clock::now();
      auto ttl = etcd_.KeepAlive(lease);
      lock.lock();
      if (lease_ == lease) {
        if (ttl.ok()) {
          lease_valid_until_ = sent + std::chrono::seconds(*ttl);
        } else if (ttl.status().code() == absl::StatusCode::kNotFound) {
          lease_lost_ = true;  // expired on etcd's side: another may lead already
          StepDown("lease expired");
          cv_.notify_all();
        } else {
          daemon::LogWarn("etcd keep-alive failed; still leading until the lease could expire",
                          {{"error", ttl.status().ToString()}});
        }
        if (leading_ && Clock::now() >= lease_valid_until_) StepDown("no keep-alive answered within the lease TTL");
      }
      Notify(lock);
    }
    cv_.wait_for(lock, options_.lease_ttl / 3, [this] { return stopping_; });
  }
}

void LeaderElection::CampaignLoop() {
  auto backoff = std::chrono::milliseconds(200);
  std::unique_lock lock(mu_);
  while (!stopping_) {
    // A fresh lease for every campaign: a lost one cannot come back.
    if (lease_ == 0 || lease_lost_) {
      const int64_t old = lease_;
      lease_ = 0;
      lock.unlock();
      if (old != 0) (void)etcd_.RevokeLease(old);
      const auto asked = Clock::now();
      auto granted = etcd_.GrantLease(options_.lease_ttl);
      lock.lock();
      if (!granted.ok()) {
        daemon::LogWarn("etcd unreachable; cannot campaign", {{"error", granted.status().ToString()}});
        cv_.wait_for(lock, backoff, [this] { return stopping_; });
        backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
        continue;
      }
      lease_ = *granted;
      lease_lost_ = false;
      lease_valid_until_ = asked + options_.lease_ttl;
    }
    const int64_t lease = lease_;
    grpc::ClientContext context;
    campaign_context_ = &context;
    lock.unlock();
    auto won = etcd_.Campaign(context, options_.election, lease, options_.candidate);
    lock.lock();
    campaign_context_ = nullptr;
    if (stopping_) {
      if (won.ok()) leading_ = *won;  // Stop resigns it
      break;
    }
    if (!won.ok()) {
      daemon::LogWarn("campaign failed; trying again", {{"error", won.status().ToString()}});
      lease_lost_ = lease_lost_ || won.status().code() == absl::StatusCode::kNotFound;
      cv_.wait_for(lock, backoff, [this] { return stopping_; });
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
      continue;
    }
    backoff = std::chrono::milliseconds(200);
    if (lease_ != lease || lease_lost_ || Clock::now() >= lease_valid_until_) {
      // Won with a lease that is gone or unconfirmed: not leading. Wait for the
      // keep-alive loop to confirm or drop it, then campaign again.
      cv_.wait_for(lock, options_.lease_ttl / 3, [this] { return stopping_; });
      continue;
    }
    leading_ = *won;
    daemon::LogInfo("elected leader", {{"epoch", std::to_string(won->revision)}, {"key", won->key}});
    pending_.push_back(static_cast<uint64_t>(won->revision));
    Notify(lock);
    // Lead until the lease is lost (the keep-alive loop steps down) or Stop.
    cv_.wait(lock, [this] { return stopping_ || !leading_; });
  }
}

}  // namespace geodesic::pathcomp
