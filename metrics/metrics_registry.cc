#include "metrics/metrics_registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

#include <prometheus/check_names.h>
#include <prometheus/text_serializer.h>

namespace geodesic::metrics {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "metrics: %s\n", what.c_str());
  std::abort();
}

prometheus::MetricType ToPrometheus(Kind kind) {
  switch (kind) {
    case Kind::kCounter: return prometheus::MetricType::Counter;
    case Kind::kGauge: return prometheus::MetricType::Gauge;
    case Kind::kHistogram: return prometheus::MetricType::Histogram;
  }
  return prometheus::MetricType::Untyped;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kCounter: return "counter";
    case Kind::kGauge: return "gauge";
    case Kind::kHistogram: return "histogram";
  }
  return "untyped";
}

const std::vector<double>& DurationBucketsSeconds() {
  static const std::vector<double> buckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                              0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return buckets;
}

Registry::Registry(std::string daemon, Labels identity)
    : prefix_("geodesic_" + daemon + "_"), owned_(std::make_shared<prometheus::Registry>()) {
  std::vector<std::string> names;
  for (const auto& [name, value] : identity) names.push_back(name);
  Gauge("info", "Always 1; the labels say which build and which instance this is", names).Add(identity).Set(1);
}

std::string Registry::Declare(std::string_view name, Kind kind, std::string_view help,
                              const std::vector<std::string>& labels) {
  std::string full = prefix_ + std::string(name);
  if (!prometheus::CheckMetricName(full)) Fail("\"" + full + "\" is not a valid metric name");
  if (help.empty()) Fail(full + ": help text is empty");
  if ((kind == Kind::kCounter) != EndsWith(full, "_total")) {
    Fail(full + ": counters, and only counters, end in _total");
  }
  if (kind != Kind::kCounter && (EndsWith(full, "_bucket") || EndsWith(full, "_count") || EndsWith(full, "_sum"))) {
    Fail(full + ": _bucket, _count and _sum are the histogram's own series");
  }
  std::set<std::string> seen;
  for (const std::string& label : labels) {
    if (!prometheus::CheckLabelName(label) || label == "le") Fail(full + ": bad label name \"" + label + "\"");
    if (!seen.insert(label).second) Fail(full + ": label \"" + label + "\" repeated");
  }
  std::lock_guard lock(mu_);
  for (const FamilyDoc& doc : docs_) {
    if (doc.name == full) Fail(full + ": declared twice");
  }
  docs_.push_back({full, kind, std::string(help), labels});
  return full;
}

prometheus::Family<prometheus::Counter>& Registry::Counter(std::string_view name, std::string_view help,
                                                           std::vector<std::string> labels) {
  const std::string full = Declare(name, Kind::kCounter, help, labels);
  return prometheus::BuildCounter().Name(full).Help(std::string(help)).Register(*owned_);
}

prometheus::Family<prometheus::Gauge>& Registry::Gauge(std::string_view name, std::string_view help,
                                                       std::vector<std::string> labels) {
  const std::string full = Declare(name, Kind::kGauge, help, labels);
  return prometheus::BuildGauge().Name(full).Help(std::string(help)).Register(*owned_);
}

HistogramFamily& Registry::Histogram(std::string_view name, std::string_view help, std::vector<std::string> labels,
                                     std::vector<double> buckets) {
  if (buckets.empty() || !std::is_sorted(buckets.begin(), buckets.end()) ||
      std::adjacent_find(buckets.begin(), buckets.end()) != buckets.end()) {
    Fail(prefix_ + std::string(name) + ": buckets must rise strictly");
  }
  const std::string full = Declare(name, Kind::kHistogram, help, labels);
  auto& family = prometheus::BuildHistogram().Name(full).Help(std::string(help)).Register(*owned_);
  std::lock_guard lock(mu_);
  histograms_.push_back(std::make_unique<HistogramFamily>(family, std::move(buckets)));
  return *histograms_.back();
}

void ScrapedFamily::Bind(Read read) {
  std::lock_guard lock(mu_);
  read_ = std::move(read);
}

std::vector<Sample> ScrapedFamily::Samples() const {
  Read read;
  {
    std::lock_guard lock(mu_);
    read = read_;
  }
  return read ? read() : std::vector<Sample>{};
}

ScrapedFamily& Registry::ScrapedGauge(std::string_view name, std::string_view help, std::vector<std::string> labels) {
  return AddScraped(name, Kind::kGauge, help, std::move(labels));
}

ScrapedFamily& Registry::ScrapedCounter(std::string_view name, std::string_view help,
                                        std::vector<std::string> labels) {
  return AddScraped(name, Kind::kCounter, help, std::move(labels));
}

ScrapedFamily& Registry::AddScraped(std::string_view name, Kind kind, std::string_view help,
                                    std::vector<std::string> labels) {
  const std::string full = Declare(name, kind, help, labels);
  std::lock_guard lock(mu_);
  scraped_.push_back({{full, kind, std::string(help), std::move(labels)}, std::make_unique<ScrapedFamily>()});
  return *scraped_.back().family;
}

std::string Registry::Scrape() const {
  std::vector<prometheus::MetricFamily> families = owned_->Collect();
  std::vector<std::pair<FamilyDoc, const ScrapedFamily*>> scraped;
  {
    std::lock_guard lock(mu_);
    for (const Scraped& source : scraped_) scraped.emplace_back(source.doc, source.family.get());
  }
  for (const auto& [doc, source] : scraped) {
    prometheus::MetricFamily family{doc.name, doc.help, ToPrometheus(doc.kind), {}};
    for (const Sample& sample : source->Samples()) {
      prometheus::ClientMetric metric;
      bool labels_match = sample.labels.size() == doc.labels.size();
      for (const std::string& label : doc.labels) {
        auto it = sample.labels.find(label);
        if (it == sample.labels.end()) {
          labels_match = false;
          break;
        }
        metric.label.push_back({label, it->second});
      }
      if (!labels_match) {
        std::fprintf(stderr, "metrics: %s: a sample's labels are not the declared ones; dropped\n",
                     doc.name.c_str());
        continue;
      }
      (doc.kind == Kind::kCounter ? metric.counter.value : metric.gauge.value) = sample.value;
      family.metric.push_back(std::move(metric));
    }
    if (!family.metric.empty()) families.push_back(std::move(family));
  }
  std::sort(families.begin(), families.end(),
            [](const prometheus::MetricFamily& a, const prometheus::MetricFamily& b) { return a.name < b.name; });
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

std::vector<FamilyDoc> Registry::Families() const {
  std::vector<FamilyDoc> docs;
  {
    std::lock_guard lock(mu_);
    docs = docs_;
  }
  std::sort(docs.begin(), docs.end(), [](const FamilyDoc& a, const FamilyDoc& b) { return a.name < b.name; });
  return docs;
}

daemon::HttpHandler ScrapeHandler(const Registry& registry) {
  return [&registry](const daemon::HttpRequest&) {
    return daemon::HttpResponse{
        .status = 200, .content_type = std::string(kTextFormatContentType), .body = registry.Scrape()};
  };
}

}  // namespace geodesic::metrics
