#include "pathcomp/service/pathcomp_metrics_binding.h"

#include <algorithm>
#include <array>
#include <map>
#include <shared_mutex>
#include <string>
#include <vector>

#include "daemon/clock.h"
#include "entity/oper_state_name.h"

namespace geodesic::pathcomp {
namespace {

using metrics::Sample;
using Samples = std::vector<Sample>;

constexpr double kBytesPerGbit = 1e9 / 8;  // Prometheus base unit: bytes
constexpr double kSecondsPerUs = 1e-6;

// Samples of every link, labelled link, src, dst: `value(link, state, emit)`
// calls emit(sample, extra labels) once per sample of the link (not at all
// for a link without one). `state` is the solver's view (null if unknown).
template <typename Value>
Samples PerLink(Model& model, Value value) {
  const std::shared_ptr<const Snapshot> snapshot = model.CurrentSnapshot();
  Samples samples;
  for (const v1::Link& link : model.Links()) {
    const int index = snapshot->LinkIndex(link.id());
    const LinkState* state = index >= 0 ? &snapshot->link_state(index) : nullptr;
    value(link, state, [&](double sample, metrics::Labels extra = {}) {
      extra.insert({{"link", link.id()}, {"src", link.src_facility_id()}, {"dst", link.dst_facility_id()}});
      samples.push_back({std::move(extra), sample});
    });
  }
  return samples;
}

// A measurement of the link, once its agent has reported one.
template <typename Read>
Samples Measured(Model& model, Read read) {
  return PerLink(model, [&](const v1::Link& link, const LinkState*, auto emit) {
    if (link.health().measured_at_unix_ms() != 0 || link.health().state() != v1::OPER_STATE_UNKNOWN) {
      emit(read(link.health()));
    }
  });
}

Samples One(double value) { return Samples{Sample{{}, value}}; }

// Agent chains of the current plan, per budget class.
struct ChainClass {
  double chains = 0, unplaced = 0, over_budget = 0;
  double latency_sum_s = 0, latency_max_s = 0, budget_used_max = 0;
};

std::map<std::string_view, ChainClass> ChainClasses(const v1::Plan* plan) {
  std::map<std::string_view, ChainClass> classes;
  for (std::string_view name : kChainBudgetClasses) classes[name];
  if (plan == nullptr) return classes;
  for (const v1::ChainPlan& chain : plan->chains()) {
    ChainClass& counted = classes[ChainBudgetClass(chain.latency_budget_us())];
    ++counted.chains;
    if (!chain.primary().placed()) {
      ++counted.unplaced;
      continue;
    }
    const double latency_s = static_cast<double>(chain.primary().total_latency_us()) * kSecondsPerUs;
    if (!chain.primary().within_budget()) ++counted.over_budget;
    counted.latency_sum_s += latency_s;
    counted.latency_max_s = std::max(counted.latency_max_s, latency_s);
    if (chain.latency_budget_us() > 0) {
      counted.budget_used_max =
          std::max(counted.budget_used_max, static_cast<double>(chain.primary().total_latency_us()) /
                                                static_cast<double>(chain.latency_budget_us()));
    }
  }
  return classes;
}

template <typename Field>
Samples PerChainClass(const Planner& planner, Field field) {
  const std::shared_ptr<const v1::Plan> plan = planner.CurrentPlan();
  Samples samples;
  for (const auto& [name, counted] : ChainClasses(plan.get())) {
    samples.push_back({{{"budget", std::string(name)}}, counted.*field});
  }
  return samples;
}

// How far each site of the current plan is behind it, on the replica whose
// plans go to routerd.
struct SiteLag {
  uint64_t installed = 0;
  uint64_t behind_generations = 0;
  double behind_seconds = 0;
  bool failing = false;
};

std::map<std::string, SiteLag> SiteLags(const PathcompMetricSources& sources) {
  std::map<std::string, SiteLag> lags;
  if (!sources.delivering_epoch()) return lags;
  const std::shared_ptr<const v1::Plan> plan = sources.planner.CurrentPlan();
  if (!plan) return lags;
  const std::map<std::string, uint64_t> installed = sources.planner.InstalledGenerations();
  std::map<std::string, bool> failing;
  for (const v1::SiteInstallStatus& status : sources.planner.InstallStatus()) {
    failing[status.facility_id()] = !status.installed();
  }
  const int64_t now_ms = daemon::UnixNowMs();
  for (const v1::SitePlan& site : plan->sites()) {
    SiteLag& lag = lags[site.facility_id()];
    if (auto it = installed.find(site.facility_id()); it != installed.end()) lag.installed = it->second;
    lag.failing = failing[site.facility_id()];
    if (lag.installed >= plan->generation()) continue;
    lag.behind_generations = plan->generation() - lag.installed;
    // Since the first plan the site lacks (or the oldest the planner still times).
    const int64_t since_ms =
        sources.planner.FirstComputedAfter(lag.installed).value_or(plan->computed_at_unix_ms());
    lag.behind_seconds = static_cast<double>(std::max<int64_t>(0, now_ms - since_ms)) / 1000.0;
  }
  return lags;
}

template <typename Read>
Samples PerSite(const PathcompMetricSources& sources, Read read) {
  Samples samples;
  for (const auto& [facility, lag] : SiteLags(sources)) samples.push_back({{{"facility", facility}}, read(lag)});
  return samples;
}

std::vector<metrics::ScrapedFamily*> AllFamilies(const PathcompScrapedFamilies& f) {
  return {&f.link_oper_state, &f.link_drained, &f.link_usable, &f.link_rtt_seconds, &f.link_jitter_seconds,
          &f.link_loss_ratio, &f.link_utilization_ratio, &f.link_capacity_bytes_per_second,
          &f.link_planned_load_bytes_per_second, &f.telemetry_messages_total, &f.telemetry_refused_total,
          &f.agent_sessions_connected, &f.plan_generation, &f.plan_model_revision, &f.model_revision,
          &f.journal_entries, &f.journal_bytes, &f.replan_pending, &f.elephant_max_utilization_ratio, &f.elephant_demand_bytes_per_second,
          &f.elephant_carried_bytes_per_second, &f.elephant_mean_latency_stretch_ratio,
          &f.elephant_p95_latency_stretch_ratio, &f.elephant_failure_safe,
          &f.elephant_max_utilization_after_failure_ratio, &f.unreachable_facility_pairs, &f.single_facility_dependencies,
          &f.leader, &f.leader_epoch, &f.etcd_reachable, &f.site_installed_generation,
          &f.site_install_lag_generations, &f.site_install_lag_seconds, &f.site_install_failing, &f.chains,
          &f.chains_unplaced, &f.chains_over_budget, &f.chain_planned_latency_sum_seconds,
          &f.chain_planned_latency_max_seconds, &f.chain_budget_used_max_ratio};
}

}  // namespace

// The sources and whether they may still be read: a scrape reads under the
// shared lock, the destructor takes it exclusively to end the binding.
struct PathcompMetricsBinding::Shared {
  explicit Shared(PathcompMetricSources sources) : sources(std::move(sources)) {}
  const PathcompMetricSources sources;
  std::shared_mutex mu;
  bool bound = true;  // guarded by mu
};

PathcompMetricsBinding::PathcompMetricsBinding(const PathcompScrapedFamilies& families,
                                               PathcompMetricSources sources)
    : families_(families), shared_(std::make_shared<Shared>(std::move(sources))) {
  // Binds `family` to `read(sources)` while the binding lives.
  const auto bind = [shared = shared_](metrics::ScrapedFamily& family, auto read) {
    family.Bind([shared, read]() -> Samples {
      std::shared_lock lock(shared->mu);
      if (!shared->bound) return {};
      return read(shared->sources);
    });
  };
  using S = const PathcompMetricSources&;

  bind(families.link_oper_state, [](S s) {
    return PerLink(s.model, [](const v1::Link& link, const LinkState*, auto emit) {
      for (v1::OperState state :
           {v1::OPER_STATE_UNKNOWN, v1::OPER_STATE_UP, v1::OPER_STATE_DEGRADED, v1::OPER_STATE_DOWN}) {
        emit(link.health().state() == state ? 1 : 0, {{"state", entity::OperStateName(state)}});
      }
    });
  });
  bind(families.link_drained, [](S s) {
    return PerLink(s.model, [](const v1::Link& link, const LinkState* state, auto emit) {
      emit(link.admin_state() == v1::ADMIN_STATE_DRAINED || (state != nullptr && state->drained) ? 1 : 0);
    });
  });
  bind(families.link_usable, [](S s) {
    return PerLink(s.model, [](const v1::Link&, const LinkState* state, auto emit) {
      emit(state != nullptr && state->usable ? 1 : 0);
    });
  });
  bind(families.link_rtt_seconds, [](S s) {
    return Measured(s.model, [](const v1::LinkHealth& health) { return health.rtt_us() * kSecondsPerUs; });
  });
  bind(families.link_jitter_seconds, [](S s) {
    return Measured(s.model, [](const v1::LinkHealth& health) { return health.jitter_us() * kSecondsPerUs; });
  });
  bind(families.link_loss_ratio,
       [](S s) { return Measured(s.model, [](const v1::LinkHealth& health) { return health.loss_ratio(); }); });
  bind(families.link_utilization_ratio, [](S s) {
    return Measured(s.model, [](const v1::LinkHealth& health) { return health.utilization_ratio(); });
  });
  bind(families.link_capacity_bytes_per_second, [](S s) {
    return PerLink(s.model, [](const v1::Link& link, const LinkState*, auto emit) {
      emit(link.capacity_gbps() * kBytesPerGbit);
    });
  });
  bind(families.link_planned_load_bytes_per_second, [](S s) {
    std::map<std::string, double> load_gbps;
    if (auto plan = s.planner.CurrentPlan()) {
      for (const v1::LinkLoad& load : plan->elephants().links()) load_gbps[load.link_id()] = load.load_gbps();
    }
    return PerLink(s.model, [&](const v1::Link& link, const LinkState*, auto emit) {
      if (auto it = load_gbps.find(link.id()); it != load_gbps.end()) emit(it->second * kBytesPerGbit);
    });
  });

  bind(families.telemetry_messages_total, [](S s) {
    const TelemetryCounters counters = s.telemetry.counters();
    return Samples{{{{"result", "applied"}}, static_cast<double>(counters.applied)},
                   {{{"result", "duplicate"}}, static_cast<double>(counters.duplicates)}};
  });
  bind(families.telemetry_refused_total, [](S s) {
    const TelemetryCounters counters = s.telemetry.counters();
    return Samples{{{{"reason", "invalid"}}, static_cast<double>(counters.refused_invalid)},
                   {{{"reason", "not_permitted"}}, static_cast<double>(counters.refused_not_permitted)},
                   {{{"reason", "out_of_order"}}, static_cast<double>(counters.refused_out_of_order)},
                   {{{"reason", "oversized"}}, static_cast<double>(counters.refused_oversized)}};
  });
  bind(families.service_reports_total, [](S s) {
    const TelemetryCounters counters = s.telemetry.counters();
    return Samples{{{{"result", "kept"}}, static_cast<double>(counters.service_reports_kept)},
                   {{{"result", "dropped"}}, static_cast<double>(counters.service_reports_dropped)}};
  });
  bind(families.agent_sessions_connected, [](S s) {
    const std::map<std::string, size_t> connected = s.telemetry.ConnectedStreams();
    Samples samples;
    for (const v1::Facility& facility : s.model.Facilities()) {
      auto it = connected.find(facility.id());
      samples.push_back({{{"facility", facility.id()}}, it == connected.end() ? 0.0 : static_cast<double>(it->second)});
    }
    return samples;
  });

  bind(families.plan_generation, [](S s) {
    auto plan = s.planner.CurrentPlan();
    return plan ? One(static_cast<double>(plan->generation())) : Samples{};
  });
  bind(families.plan_model_revision,
       [](S s) { return One(static_cast<double>(s.planner.ConvergenceState().plan_model_revision)); });
  bind(families.model_revision, [](S s) { return One(static_cast<double>(s.model.Revision())); });
  bind(families.journal_entries, [](S s) {
    const Model::JournalSpan journal = s.model.KeptJournal();
    return One(static_cast<double>(journal.last_seq + 1 - journal.first_seq));
  });
  bind(families.journal_bytes, [](S s) { return One(static_cast<double>(s.model.KeptJournal().bytes)); });
  bind(families.replan_pending, [](S s) { return One(s.planner.ConvergenceState().replan_pending ? 1 : 0); });
  // The plan's figures, or none before the first plan.
  const auto plan_figure = [&bind](metrics::ScrapedFamily& family, double (*figure)(const v1::Plan&)) {
    bind(family, [figure](S s) {
      auto plan = s.planner.CurrentPlan();
      return plan ? One(figure(*plan)) : Samples{};
    });
  };
  plan_figure(families.elephant_max_utilization_ratio,
              [](const v1::Plan& plan) { return plan.elephants().max_utilization(); });
  plan_figure(families.elephant_demand_bytes_per_second,
              [](const v1::Plan& plan) { return plan.elephants().demand_gbps() * kBytesPerGbit; });
  plan_figure(families.elephant_carried_bytes_per_second,
              [](const v1::Plan& plan) { return plan.elephants().carried_gbps() * kBytesPerGbit; });
  plan_figure(families.elephant_mean_latency_stretch_ratio,
              [](const v1::Plan& plan) { return plan.elephants().mean_stretch(); });
  plan_figure(families.elephant_p95_latency_stretch_ratio,
              [](const v1::Plan& plan) { return plan.elephants().p95_stretch(); });
  plan_figure(families.elephant_failure_safe, [](const v1::Plan& plan) {
    for (const v1::ElephantClass& cls : plan.elephants().classes()) {
      if (cls.protection() != "" && cls.protection() != "none" && !cls.failure_safe()) return 0.0;
    }
    return 1.0;
  });
  plan_figure(families.elephant_max_utilization_after_failure_ratio, [](const v1::Plan& plan) {
    double worst = 0;
    for (const v1::ElephantClass& cls : plan.elephants().classes()) {
      worst = std::max(worst, cls.max_utilization_after_failure());
    }
    return worst;
  });
  plan_figure(families.unreachable_facility_pairs,
              [](const v1::Plan& plan) { return static_cast<double>(plan.unreachable_size()); });
  plan_figure(families.single_facility_dependencies, [](const v1::Plan& plan) {
    return static_cast<double>(plan.single_facility_dependencies_size());
  });

  bind(families.leader, [](S s) { return One(s.delivering_epoch() ? 1 : 0); });
  bind(families.leader_epoch,
       [](S s) { return One(static_cast<double>(s.delivering_epoch().value_or(0))); });
  bind(families.etcd_reachable,
       [](S s) { return s.etcd_reachable ? One(s.etcd_reachable() ? 1 : 0) : Samples{}; });

  bind(families.site_installed_generation,
       [](S s) { return PerSite(s, [](const SiteLag& lag) { return static_cast<double>(lag.installed); }); });
  bind(families.site_install_lag_generations, [](S s) {
    return PerSite(s, [](const SiteLag& lag) { return static_cast<double>(lag.behind_generations); });
  });
  bind(families.site_install_lag_seconds,
       [](S s) { return PerSite(s, [](const SiteLag& lag) { return lag.behind_seconds; }); });
  bind(families.site_install_failing,
       [](S s) { return PerSite(s, [](const SiteLag& lag) { return lag.failing ? 1.0 : 0.0; }); });

  const auto chain_figure = [&bind](metrics::ScrapedFamily& family, double ChainClass::*field) {
    bind(family, [field](S s) { return PerChainClass(s.planner, field); });
  };
  chain_figure(families.chains, &ChainClass::chains);
  chain_figure(families.chains_unplaced, &ChainClass::unplaced);
  chain_figure(families.chains_over_budget, &ChainClass::over_budget);
  chain_figure(families.chain_planned_latency_sum_seconds, &ChainClass::latency_sum_s);
  chain_figure(families.chain_planned_latency_max_seconds, &ChainClass::latency_max_s);
  chain_figure(families.chain_budget_used_max_ratio, &ChainClass::budget_used_max);
}

PathcompMetricsBinding::~PathcompMetricsBinding() {
  for (metrics::ScrapedFamily* family : AllFamilies(families_)) family->Bind({});
  // A scrape that took a read function before it was unbound may still run it.
  std::unique_lock lock(shared_->mu);
  shared_->bound = false;
}

}  // namespace geodesic::pathcomp
