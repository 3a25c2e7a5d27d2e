#pragma once
// A daemon's metrics, named and typed the Prometheus way and served as text
// (format 0.0.4) on the daemon's admin listener (daemon/admin_server.h, GET
// /metrics).
//
//   metrics::Registry registry("routerd", {{"facility", "iad"}, {"version", "1.2.0"}});
//   auto& updates = registry.Counter("bgp_updates_sent_total", "UPDATE messages sent", {"router"});
//   updates.Add({{"router", "r1"}}).Increment();
//   auto& remaining = registry.ScrapedGauge("fail_static_remaining_seconds", "...");
//   remaining.Bind([&] { return std::vector<metrics::Sample>{{{}, watchdog.Remaining()}}; });
//
// Every family is declared here with its help and label names, so the
// registry can list itself (Families(): the README's metric reference is
// generated from it, tools/metrics_doc). Names get the prefix
// `geodesic_<daemon>_`; counters end in `_total`; a malformed or repeated
// name is a programming error and aborts with the name. Each registry has
// `geodesic_<daemon>_info` = 1 with the identity labels given.
//
// Two kinds of family:
//   - owned (Counter, Gauge, Histogram): prometheus-cpp families the code
//     updates as things happen (lock-free increments);
//   - scraped (ScrapedGauge, ScrapedCounter): read from state kept elsewhere
//     each time /metrics is read, so series of links or sessions that no
//     longer exist disappear with them. Declared first (a daemon declares
//     all its families before it has the state, so that the doc tool can
//     list them), bound to a function that reads the state later; unbound,
//     a family has no samples.
//
// Thread-safe. Families live as long as the registry; the functions given to
// Scraped* are called on the admin listener's threads and must be thread-safe.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "daemon/admin_server.h"

namespace geodesic::metrics {

using Labels = std::map<std::string, std::string>;

enum class Kind { kCounter, kGauge, kHistogram };
std::string_view KindName(Kind kind);  // "counter", "gauge", "histogram"

// One family as the registry declares it.
struct FamilyDoc {
  std::string name;  // full name, geodesic_<daemon>_...
  Kind kind = Kind::kGauge;
  std::string help;
  std::vector<std::string> labels;  // label names, in declaration order
};

// One value of a scraped family: labels exactly the family's label names.
struct Sample {
  Labels labels;
  double value = 0;
};

// Bucket bounds in seconds for durations from 100 µs to 10 s (probe RTTs,
// commits, solves, repairs).
const std::vector<double>& DurationBucketsSeconds();

// A histogram family and its bucket bounds: Add(labels) makes a series.
class HistogramFamily {
 public:
  HistogramFamily(prometheus::Family<prometheus::Histogram>& family, std::vector<double> buckets)
      : family_(family), buckets_(std::move(buckets)) {}
  prometheus::Histogram& Add(const Labels& labels = {}) { return family_.Add(labels, buckets_); }

 private:
  prometheus::Family<prometheus::Histogram>& family_;
  const std::vector<double> buckets_;
};

// A scraped family: Bind the function that reads its samples (again, to
// replace it; an empty function unbinds). Thread-safe.
class ScrapedFamily {
 public:
  using Read = std::function<std::vector<Sample>()>;
  void Bind(Read read);
  std::vector<Sample> Samples() const;  // none while unbound

 private:
  mutable std::mutex mu_;
  Read read_;  // guarded by mu_
};

class Registry {
 public:
  // `daemon` is the name part of the prefix ("pathcomp", "site_agent",
  // "routerd"); `identity` labels the _info sample (version, facility, ...).
  Registry(std::string daemon, Labels identity);
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // `name` without the prefix. Label names must be valid and not repeated.
  prometheus::Family<prometheus::Counter>& Counter(std::string_view name, std::string_view help,
                                                   std::vector<std::string> labels = {});
  prometheus::Family<prometheus::Gauge>& Gauge(std::string_view name, std::string_view help,
                                               std::vector<std::string> labels = {});
  HistogramFamily& Histogram(std::string_view name, std::string_view help, std::vector<std::string> labels = {},
                             std::vector<double> buckets = DurationBucketsSeconds());

  ScrapedFamily& ScrapedGauge(std::string_view name, std::string_view help, std::vector<std::string> labels = {});
  ScrapedFamily& ScrapedCounter(std::string_view name, std::string_view help, std::vector<std::string> labels = {});

  // Every family with its current samples, in the Prometheus text format.
  std::string Scrape() const;
  // Every declared family (owned and scraped, with or without samples), by name.
  std::vector<FamilyDoc> Families() const;
  const std::string& prefix() const { return prefix_; }

 private:
  struct Scraped {
    FamilyDoc doc;
    std::unique_ptr<ScrapedFamily> family;
  };
  std::string Declare(std::string_view name, Kind kind, std::string_view help, const std::vector<std::string>& labels);
  ScrapedFamily& AddScraped(std::string_view name, Kind kind, std::string_view help, std::vector<std::string> labels);

  const std::string prefix_;
  std::shared_ptr<prometheus::Registry> owned_;
  mutable std::mutex mu_;
  std::vector<FamilyDoc> docs_;                                // guarded by mu_
  std::vector<Scraped> scraped_;                               // guarded by mu_
  std::vector<std::unique_ptr<HistogramFamily>> histograms_;   // guarded by mu_
};

// The content type of Scrape()'s text.
inline constexpr std::string_view kTextFormatContentType = "text/plain; version=0.0.4; charset=utf-8";

// GET /metrics on an admin listener: `registry` scraped (it must outlive the listener).
daemon::HttpHandler ScrapeHandler(const Registry& registry);

}  // namespace geodesic::metrics
