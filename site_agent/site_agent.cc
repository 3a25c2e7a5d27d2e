#include "site_agent/site_agent.h"

#include <condition_variable>
#include <mutex>
#include <random>

#include "absl/strings/str_cat.h"
#include "daemon/clock.h"
#include "daemon/log.h"
#include "site_agent/link_health_source.h"
#include "site_agent/report_stream.h"
#include "tls/credentials.h"

namespace geodesic::site_agent {
namespace {

uint64_t NewIncarnation() {
  std::random_device device;
  uint64_t value = 0;
  while (value == 0) value = (static_cast<uint64_t>(device()) << 32) ^ device();
  return value;
}

class SiteAgentImpl final : public SiteAgent {
 public:
  explicit SiteAgentImpl(AgentConfig config)
      : config_(std::move(config)), source_(config_.StaticHealth(), config_.health_file) {
    source_.Poll(daemon::UnixNowMs());
    v1::AgentHello hello;
    hello.set_facility_id(config_.facility_id);
    hello.set_agent_id(config_.agent_id);
    hello.set_incarnation(NewIncarnation());
    auto credentials = tls::MakeChannelCredentials(config_.tls, tls::Identity::Kind::kPathcomp);
    for (const auto& address : config_.pathcomp_addresses) {
      ReportStreamOptions options;
      options.address = address;
      options.hello = hello;
      options.outbox_limit = config_.outbox_limit;
      streams_.push_back(std::make_unique<ReportStream>(options, credentials, [this] {
        std::lock_guard lock(source_mu_);
        return source_.Current();
      }));
    }
    daemon::LogInfo("site agent ready", {{"facility", config_.facility_id},
                                         {"links", std::to_string(config_.links.size())},
                                         {"replicas", std::to_string(streams_.size())},
                                         {"incarnation", std::to_string(hello.incarnation())}});
  }

  void Run() override {
    for (auto& stream : streams_) stream->Start();
    std::unique_lock lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, config_.poll_interval, [this] { return stopping_; });
      if (stopping_) break;
      std::vector<v1::LinkReport> changed;
      {
        std::lock_guard source_lock(source_mu_);
        changed = source_.Poll(daemon::UnixNowMs());
      }
      if (changed.empty()) continue;
      for (const auto& report : changed) {
        daemon::LogInfo("link health changed",
                        {{"link", report.link_id()},
                         {"state", v1::OperState_Name(report.health().state())}});
      }
      for (auto& stream : streams_) stream->Publish(changed);
    }
    lock.unlock();
    for (auto& stream : streams_) stream->Stop();
  }

  void Stop() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
  }

 private:
  const AgentConfig config_;
  std::mutex source_mu_;
  LinkHealthSource source_;
  std::vector<std::unique_ptr<ReportStream>> streams_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SiteAgent>> SiteAgent::Create(AgentConfig config) {
  if (auto status = tls::ValidateTlsFiles(config.tls); !status.ok()) return status;
  auto identity = tls::ReadCertificateIdentity(config.tls.cert_path);
  if (!identity.ok()) return identity.status();
  if (identity->kind != tls::Identity::Kind::kAgent ||
      identity->facility_id != config.facility_id) {
    return absl::InvalidArgumentError(absl::StrCat(
        "facility: \"", config.facility_id, "\" does not match the certificate ",
        config.tls.cert_path, " (", identity->spiffe_id, ")"));
  }
  return std::unique_ptr<SiteAgent>(new SiteAgentImpl(std::move(config)));
}

}  // namespace geodesic::site_agent
