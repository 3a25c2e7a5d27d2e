#pragma once
// routerd's BGP speaker: installs the plan's routes into the site's routers.
// Holds the target paths for every prefix, one session per configured router
// (session.h), and turns every RibDiff into UPDATEs on every session.
// Thread-safe: Apply and Status may be called from any thread; the sessions
// run on the speaker's own thread (between Start and destruction).
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include "absl/status/statusor.h"
#include "routerd/bgp/route_paths.h"
#include "routerd/bgp/session.h"
#include "routerd/route_installer.h"

namespace geodesic::routerd::bgp {

struct SpeakerConfig {
  SessionSettings session;
  std::vector<PeerConfig> peers;
  PathPolicy paths;
};

class BgpSpeaker final : public RouteInstaller {
 public:
  // Starts the sessions (they connect in the background): at once, or, when
  // config.session.restarting, once InitialRoutesLoaded says the routes the
  // routers still hold are back in: a session established before would send
  // End-of-RIB with nothing, and the routers would drop what they kept.
  static std::unique_ptr<BgpSpeaker> Start(SpeakerConfig config);
  ~BgpSpeaker() override;  // closes the sessions without NOTIFICATION (see BgpSession::Stop)

  // Translates every added or changed route first; InvalidArgument (and
  // nothing changed) when one cannot be announced. Returns once the change is
  // queued on every established session.
  [[nodiscard]] absl::Status Apply(const RibDiff& diff) override;
  // True once every configured session is established and has written every
  // UPDATE of what Apply gave it (BgpSession::AllSent); polls every 5 ms.
  [[nodiscard]] bool WaitSentToRouters(std::chrono::steady_clock::time_point deadline) override;

  void InitialRoutesLoaded() override;

  std::vector<PeerStatus> Status() const;
  size_t route_count() const;

 private:
  explicit BgpSpeaker(SpeakerConfig config);
  void StartSessions();  // once
  // Runs `work` on the speaker's thread and waits for it.
  void RunOnSpeakerThread(const std::function<void()>& work) const;

  SpeakerConfig config_;
  mutable boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::mutex builder_mu_;
  PathBuilder builder_;  // guarded by builder_mu_
  PathsByPrefix routes_;  // speaker thread only
  std::vector<std::shared_ptr<BgpSession>> sessions_;
  std::once_flag sessions_started_;
  std::thread thread_;
};

}  // namespace geodesic::routerd::bgp
