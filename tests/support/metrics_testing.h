#pragma once
// Reading a daemon's /metrics text in tests: one series' value, by its exact
// name and labels, as Prometheus would scrape it.
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "metrics/metrics_registry.h"

namespace geodesic::testing {

// The value of the series `name{labels}` in `text` (the Prometheus text
// format); nullopt when the text has no such series. `labels` must be all
// of the series' labels (in any order).
std::optional<double> SeriesValue(const std::string& text, const std::string& name,
                                  const metrics::Labels& labels = {});

// GET `admin_url` + "/metrics" ("http://127.0.0.1:PORT", as LocalLab::AdminUrl
// gives it) within 2 s; the body when the answer is 200. Unavailable otherwise.
absl::StatusOr<std::string> ScrapeMetrics(const std::string& admin_url);

// The family of that name as `registry` declares it, if it does.
std::optional<metrics::FamilyDoc> FindFamily(const metrics::Registry& registry, const std::string& name);

}  // namespace geodesic::testing
