#include "site_agent/site_agent.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "daemon/clock.h"
#include "daemon/log.h"
#include "local_events/local_event_sender.h"
#include "site_agent/agent_metrics.h"
#include "site_agent/fabric_health_source.h"
#include "site_agent/interface_counters.h"
#include "site_agent/link_health_source.h"
#include "site_agent/probe/probe_engine.h"
#include "site_agent/report_stream.h"
#include "site_agent/service_report_intake.h"
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
  SiteAgentImpl(AgentConfig config, std::optional<FabricHealthSource> fabric,
                std::optional<probe::ProbeEngineOptions> probing, metrics::Registry& registry)
      : config_(std::move(config)),
        incarnation_(NewIncarnation()),
        metrics_(registry),
        links_(config_.StaticHealth(), config_.health_file),
        fabric_(std::move(fabric)),
        counters_(config_.interfaces_root),
        service_reports_(config_.service_reports ? config_.service_reports->max_reports : 1) {
    for (const LinkConfig& link : config_.links) {
      if (link.capacity_gbps > 0) capacity_gbps_[link.id] = link.capacity_gbps;
    }
    v1::AgentHello hello;
    hello.set_facility_id(config_.facility_id);
    hello.set_agent_id(config_.agent_id);
    hello.set_incarnation(incarnation_);
    auto credentials = tls::MakeChannelCredentials(config_.tls, tls::Identity::Kind::kPathcomp);
    for (const auto& address : config_.pathcomp_addresses) {
      ReportStreamOptions options;
      options.address = address;
      options.hello = hello;
      options.outbox_limit = config_.outbox_limit;
      streams_.push_back(std::make_unique<ReportStream>(options, credentials, [this] { return FullState(); }));
    }
    if (!config_.routerd_socket.empty()) {
      routerd_ = std::make_unique<local_events::LocalEventSender>(local_events::SenderOptions{
          .socket_path = config_.routerd_socket, .facility_id = config_.facility_id, .incarnation = incarnation_});
    }
    if (probing) {
      std::vector<prometheus::Histogram*> rtt_histograms;
      for (const probe::ProbedLink& link : probing->links) rtt_histograms.push_back(&metrics_.ProbeRtt(link.id));
      probing->on_rtt = [rtt_histograms](size_t link_index, std::chrono::nanoseconds rtt) {
        rtt_histograms[link_index]->Observe(std::chrono::duration<double>(rtt).count());
      };
      // Only the engine's own thread calls back; it just wakes the loop.
      auto engine = probe::ProbeEngine::Start(*std::move(probing), [this] {
        {
          std::lock_guard lock(mu_);
          probe_changed_ = true;
        }
        cv_.notify_all();
      });
      if (engine.ok()) {
        probes_ = *std::move(engine);
      } else {
        start_status_ = engine.status();
        return;
      }
    }
    if (config_.service_reports) {
      if (absl::Status started = StartServiceReportIntake(); !started.ok()) {
        start_status_ = started;
        return;
      }
    }
    Measure(/*measurements_due=*/true);
    BindMetrics();
    daemon::LogInfo("site agent ready", {{"facility", config_.facility_id},
                                         {"links", std::to_string(config_.links.size())},
                                         {"replicas", std::to_string(streams_.size())},
                                         {"fabric_health", fabric_ ? config_.fabric_health->source : "none"},
                                         {"routerd_socket", config_.routerd_socket.empty() ? "none" : config_.routerd_socket},
                                         {"service_reports", intake_ ? intake_->url() + kServiceReportsPath : "off"},
                                         {"probe", probes_ ? absl::StrCat(probes_->local_endpoint().address().to_string(), ":",
                                                                          probes_->local_endpoint().port())
                                                           : "off"},
                                         {"incarnation", std::to_string(incarnation_)}});
  }

  void Run() override {
    for (auto& stream : streams_) stream->Start();
    if (routerd_) routerd_->Start();
    auto next_report = std::chrono::steady_clock::now() + config_.report_interval;
    std::unique_lock lock(mu_);
    while (!stopping_) {
      // A probe verdict is sent at once; everything else at the poll interval.
      cv_.wait_for(lock, config_.poll_interval,
                   [this] { return stopping_ || probe_changed_ || service_reports_queued_; });
      if (stopping_) break;
      probe_changed_ = false;
      service_reports_queued_ = false;
      lock.unlock();
      heartbeat_.Beat();
      const auto now = std::chrono::steady_clock::now();
      const bool due = now >= next_report;
      if (due) next_report = now + config_.report_interval;
      Measure(due);
      if (now >= next_counters_log_) {
        next_counters_log_ = now + kCountersLogInterval;
        LogProbeRefusals();
      }
      lock.lock();
    }
    lock.unlock();
    for (auto& stream : streams_) stream->Stop();
    if (routerd_) routerd_->Stop();
  }

  // The scraped families read the members below: unbound before they go;
  // the intake calls back into the loop's state.
  ~SiteAgentImpl() override {
    intake_.reset();
    metrics_.Unbind();
  }

  const absl::Status& start_status() const { return start_status_; }

  daemon::HealthChecks health_checks() override {
    const auto max_age = std::max<std::chrono::milliseconds>(10 * config_.poll_interval, std::chrono::seconds(10));
    return {.live = [this, max_age] { return heartbeat_.Check("report loop", max_age); },
            .ready = [this] {
              size_t open = 0;
              for (const auto& stream : streams_) open += stream->connected() ? 1 : 0;
              if (open == 0) {
                return daemon::HealthVerdict{
                    .ok = false, .reason = absl::StrCat("no report session open to any of ", streams_.size(),
                                                        " pathcomp replicas")};
              }
              return daemon::HealthVerdict{
                  .ok = true, .reason = absl::StrCat("reporting to ", open, " of ", streams_.size(), " pathcomp replicas")};
            }};
  }

  void Stop() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
  }

 private:
  // Reads every source and sends what changed: to routerd (local repair
  // cannot wait for a controller) and to every replica.
  void Measure(bool measurements_due) {
    std::vector<v1::LinkReport> changed;
    std::vector<v1::FabricPlaneHealth> planes;
    {
      std::lock_guard lock(sources_mu_);
      if (probes_) {
        for (const auto& [link_id, measured] : probes_->Current()) links_.SetMeasured(link_id, measured);
      }
      if (measurements_due) SampleUtilization();
      changed = links_.Poll(daemon::UnixNowMs(), measurements_due);
      if (fabric_) planes = fabric_->Poll(daemon::UnixNowMs());
    }
    const std::vector<v1::ServiceLatencyReport> service_reports = service_reports_.TakePending();
    if (changed.empty() && planes.empty()) {
      if (!service_reports.empty()) {
        for (auto& stream : streams_) stream->Publish({}, {}, service_reports);
      }
      return;
    }
    for (const auto& report : changed) {
      if (report.health().state() == LastState(report.link_id())) continue;
      daemon::LogInfo("link health changed",
                      {{"link", report.link_id()}, {"state", v1::OperState_Name(report.health().state())}});
      last_state_[report.link_id()] = report.health().state();
    }
    for (const auto& plane : planes) {
      daemon::LogInfo("fabric plane health changed", {{"plane", std::to_string(plane.plane())},
                                                      {"state", v1::OperState_Name(plane.state())},
                                                      {"failed_rails", std::to_string(plane.failed_rails_size())}});
    }
    if (routerd_ && !changed.empty()) routerd_->Publish(changed);
    for (auto& stream : streams_) stream->Publish(changed, planes, service_reports);
  }

  // The local endpoint services post their latency reports to
  // (service_report_intake.h); each accepted post wakes the loop to relay it.
  absl::Status StartServiceReportIntake() {
    const ServiceReportsConfig& settings = *config_.service_reports;
    auto server = daemon::AdminServer::Start({.listen = settings.listen,
                                              .address_file = settings.address_file,
                                              .max_request_bytes = kMaxServiceReportRequestBytes});
    if (!server.ok()) {
      return absl::Status(server.status().code(), "service_reports." + std::string(server.status().message()));
    }
    intake_ = *std::move(server);
    intake_->AddPostRoute(kServiceReportsPath, [this](const daemon::HttpRequest& request) {
      return AcceptServiceReports(request, daemon::UnixNowMs(), service_reports_, [this] {
        {
          std::lock_guard lock(mu_);
          service_reports_queued_ = true;
        }
        cv_.notify_all();
      });
    });
    return absl::OkStatus();
  }

  // Every scraped family of metrics_ to the state it reports.
  void BindMetrics() {
    metrics_.BindLinks([this] {
      std::lock_guard lock(sources_mu_);
      std::vector<LinkSample> samples;
      for (v1::LinkReport& report : links_.Current()) {
        auto capacity = capacity_gbps_.find(report.link_id());
        samples.push_back({.link_id = report.link_id(),
                           .health = std::move(*report.mutable_health()),
                           .capacity_bytes_per_second = capacity == capacity_gbps_.end() ? 0 : capacity->second * 1e9 / 8});
      }
      return samples;
    });
    if (fabric_) {
      metrics_.BindPlanes([this] {
        std::lock_guard lock(sources_mu_);
        return fabric_->Current();
      });
    }
    metrics_.BindReplicas([this] {
      std::vector<ReplicaSample> samples;
      for (size_t i = 0; i < streams_.size(); ++i) {
        samples.push_back({.replica = config_.pathcomp_addresses[i], .stats = streams_[i]->stats()});
      }
      return samples;
    });
    if (probes_) metrics_.BindProbes([this] { return probes_->counters(); });
    if (routerd_) {
      metrics_.BindLocalEvents([this] {
        return LocalEventsSample{.connected = routerd_->connected(), .messages_sent = routerd_->messages_sent()};
      });
    }
  }

  void SampleUtilization() {
    const auto now = std::chrono::steady_clock::now();
    for (const LinkConfig& link : config_.links) {
      if (link.interface.empty()) continue;
      double capacity = link.capacity_gbps;
      if (capacity <= 0) {
        absl::StatusOr<double> speed = counters_.SpeedGbps(link.interface);
        if (!speed.ok()) {
          if (warned_interfaces_.insert(link.interface).second) {
            daemon::LogWarn("no utilization for link", {{"link", link.id}, {"error", std::string(speed.status().message())}});
          }
          continue;
        }
        capacity = *speed;
      }
      capacity_gbps_[link.id] = capacity;
      if (std::optional<double> utilization = counters_.Sample(link.interface, capacity, now)) {
        links_.SetUtilization(link.id, std::min(*utilization, 100.0));
      }
    }
  }

  // Probe packets refused since the last time, if any (strangers, replays,
  // malformed packets are an operator's business, but not line by line).
  void LogProbeRefusals() {
    if (!probes_) return;
    const probe::ProbeCounters now = probes_->counters();
    const uint64_t refused = now.rejected_unknown_peer + now.rejected_malformed + now.rejected_replay +
                             now.rejected_unexpected_reply;
    const uint64_t before = logged_.rejected_unknown_peer + logged_.rejected_malformed + logged_.rejected_replay +
                            logged_.rejected_unexpected_reply;
    if (refused > before) {
      daemon::LogWarn("probe packets refused",
                      {{"unknown_peer", std::to_string(now.rejected_unknown_peer - logged_.rejected_unknown_peer)},
                       {"malformed", std::to_string(now.rejected_malformed - logged_.rejected_malformed)},
                       {"replayed", std::to_string(now.rejected_replay - logged_.rejected_replay)},
                       {"unexpected_reply",
                        std::to_string(now.rejected_unexpected_reply - logged_.rejected_unexpected_reply)}});
    }
    logged_ = now;
  }

  v1::OperState LastState(const std::string& link_id) const {
    auto it = last_state_.find(link_id);
    return it == last_state_.end() ? v1::OPER_STATE_UNKNOWN : it->second;
  }

  v1::Update FullState() {
    std::lock_guard lock(sources_mu_);
    v1::Update state;
    for (auto& report : links_.Current()) *state.add_links() = std::move(report);
    if (fabric_) {
      for (auto& plane : fabric_->Current()) *state.add_planes() = std::move(plane);
    }
    for (auto& report : service_reports_.Latest(daemon::UnixNowMs())) *state.add_service_reports() = std::move(report);
    return state;
  }

  const AgentConfig config_;
  const uint64_t incarnation_;
  AgentMetrics metrics_;
  std::mutex sources_mu_;  // guards the sources below (streams and /metrics read them)
  LinkHealthSource links_;
  // Per link, the capacity its utilization was last computed against (configured or the interface's speed).
  std::map<std::string, double> capacity_gbps_;
  std::optional<FabricHealthSource> fabric_;
  InterfaceCounters counters_;
  std::set<std::string> warned_interfaces_;
  std::map<std::string, v1::OperState> last_state_;  // for logging transitions only
  static constexpr std::chrono::seconds kCountersLogInterval{60};
  std::chrono::steady_clock::time_point next_counters_log_ = std::chrono::steady_clock::now() + kCountersLogInterval;
  probe::ProbeCounters logged_;  // as of the last refusal log
  ServiceReportBuffer service_reports_;  // thread-safe
  std::vector<std::unique_ptr<ReportStream>> streams_;
  std::unique_ptr<local_events::LocalEventSender> routerd_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool probe_changed_ = false;
  bool service_reports_queued_ = false;  // guarded by mu_
  daemon::Heartbeat heartbeat_;  // beaten by Run's loop
  absl::Status start_status_;
  std::unique_ptr<daemon::AdminServer> intake_;  // service reports; null without service_reports:
  // Last: its thread calls back into the members above until it is destroyed.
  std::unique_ptr<probe::ProbeEngine> probes_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SiteAgent>> SiteAgent::Create(AgentConfig config, metrics::Registry& registry) {
  if (auto status = tls::ValidateTlsFiles(config.tls); !status.ok()) return status;
  auto identity = tls::ReadCertificateIdentity(config.tls.cert_path);
  if (!identity.ok()) return identity.status();
  if (identity->kind != tls::Identity::Kind::kAgent ||
      identity->facility_id != config.facility_id) {
    return absl::InvalidArgumentError(absl::StrCat(
        "facility: \"", config.facility_id, "\" does not match the certificate ",
        config.tls.cert_path, " (", identity->spiffe_id, ")"));
  }
  std::optional<FabricHealthSource> fabric;
  if (config.fabric_health) {
    auto source = FabricHealthSource::Create(config.fabric_health->source, config.fabric_health->shape);
    if (!source.ok()) return source.status();
    fabric = *std::move(source);
  }
  std::optional<probe::ProbeEngineOptions> probing;
  if (config.probe) {
    const ProbeConfig& settings = *config.probe;
    probe::ProbeEngineOptions options;
    auto listen = probe::ParseUdpEndpoint(settings.listen);
    if (!listen.ok()) return listen.status();
    options.listen = *listen;
    options.estimator = {.interval = settings.interval,
                         .detect_multiplier = settings.detect_multiplier,
                         .window = settings.window,
                         .loss_degraded_ratio = settings.loss_degraded_ratio,
                         .rtt_degraded_us = settings.rtt_degraded_us,
                         .hold_down = settings.hold_down,
                         .hold_down_max = settings.hold_down_max};
    options.realtime_priority = settings.realtime_priority;
    for (const LinkConfig& link : config.links) {
      if (link.peer.empty()) continue;
      auto peer = probe::ParseUdpEndpoint(link.peer);
      if (!peer.ok()) return peer.status();
      options.links.push_back({link.id, *peer});
    }
    for (const std::string& text : settings.accept_from) {
      auto peer = probe::ParseUdpEndpoint(text);
      if (!peer.ok()) return peer.status();
      options.accept_from.push_back(*peer);
    }
    probing = std::move(options);
  }
  auto agent = std::make_unique<SiteAgentImpl>(std::move(config), std::move(fabric), std::move(probing), registry);
  if (!agent->start_status().ok()) return agent->start_status();
  return agent;
}

}  // namespace geodesic::site_agent
