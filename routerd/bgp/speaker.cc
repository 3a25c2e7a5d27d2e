#include "routerd/bgp/speaker.h"

#include <chrono>
#include <future>
#include <thread>

namespace geodesic::routerd::bgp {

BgpSpeaker::BgpSpeaker(SpeakerConfig config)
    : config_(std::move(config)), work_(boost::asio::make_work_guard(io_)), builder_(config_.paths) {}

std::unique_ptr<BgpSpeaker> BgpSpeaker::Start(SpeakerConfig config) {
  std::unique_ptr<BgpSpeaker> speaker(new BgpSpeaker(std::move(config)));
  for (const PeerConfig& peer : speaker->config_.peers) {
    speaker->sessions_.push_back(
        std::make_shared<BgpSession>(speaker->io_, speaker->config_.session, peer, speaker->routes_));
  }
  if (!speaker->config_.session.restarting) speaker->StartSessions();
  speaker->thread_ = std::thread([io = &speaker->io_] { io->run(); });
  return speaker;
}

void BgpSpeaker::StartSessions() {
  std::call_once(sessions_started_, [this] {
    for (auto& session : sessions_) boost::asio::post(io_, [session] { session->Start(); });
  });
}

void BgpSpeaker::InitialRoutesLoaded() { StartSessions(); }

BgpSpeaker::~BgpSpeaker() {
  RunOnSpeakerThread([this] {
    for (auto& session : sessions_) session->Stop();
  });
  work_.reset();
  io_.stop();
  thread_.join();
}

void BgpSpeaker::RunOnSpeakerThread(const std::function<void()>& work) const {
  std::promise<void> done;
  boost::asio::post(io_, [&] {
    work();
    done.set_value();
  });
  done.get_future().wait();
}

absl::Status BgpSpeaker::Apply(const RibDiff& diff) {
  std::vector<std::pair<IpPrefix, std::vector<BgpPath>>> updates;
  std::vector<IpPrefix> removed;
  {
    std::lock_guard lock(builder_mu_);
    updates.reserve(diff.added.size() + diff.changed.size());
    for (const v1::ForwardingRoute& route : diff.added) {
      auto built = builder_.Build(route);
      if (!built.ok()) return built.status();
      updates.push_back(*std::move(built));
    }
    for (const RouteChange& change : diff.changed) {
      auto built = builder_.Build(change.after);
      if (!built.ok()) return built.status();
      updates.push_back(*std::move(built));
    }
  }
  for (const v1::ForwardingRoute& route : diff.removed) {
    auto prefix = IpPrefix::Parse(route.prefix());
    if (!prefix) return absl::InvalidArgumentError("withdrawn route prefix \"" + route.prefix() + "\" is not a CIDR prefix");
    removed.push_back(*prefix);
  }
  RunOnSpeakerThread([&] {
    std::vector<IpPrefix> dirty;
    dirty.reserve(updates.size() + removed.size());
    for (auto& [prefix, paths] : updates) {
      dirty.push_back(prefix);
      if (paths.empty()) {
        routes_.erase(prefix);
      } else {
        routes_[prefix] = std::move(paths);
      }
    }
    for (const IpPrefix& prefix : removed) {
      dirty.push_back(prefix);
      routes_.erase(prefix);
    }
    for (auto& session : sessions_) session->RoutesChanged(dirty);
  });
  return absl::OkStatus();
}

bool BgpSpeaker::WaitSentToRouters(std::chrono::steady_clock::time_point deadline) {
  while (true) {
    bool sent = true;
    RunOnSpeakerThread([&] {
      for (const auto& session : sessions_) sent = sent && session->AllSent();
    });
    if (sent) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::vector<PeerStatus> BgpSpeaker::Status() const {
  std::vector<PeerStatus> status;
  RunOnSpeakerThread([&] {
    for (const auto& session : sessions_) status.push_back(session->status());
  });
  return status;
}

size_t BgpSpeaker::route_count() const {
  size_t count = 0;
  RunOnSpeakerThread([&] { count = routes_.size(); });
  return count;
}

}  // namespace geodesic::routerd::bgp
