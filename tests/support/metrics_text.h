#pragma once
// Test-only: reads a daemon's /metrics answer (the Prometheus text format,
// as metrics::Registry::Scrape() writes it) the way a test asks about it:
// one sample by family name and exact label set.
#include <optional>
#include <string>
#include <string_view>

#include "metrics/metrics_registry.h"

namespace geodesic::testing {

// The value of the sample of `name` (a full series name, e.g.
// "geodesic_pathcomp_solves_total" or a histogram's "..._count") whose labels
// are exactly `labels`; nullopt when the text has none. Label values with
// escaped quotes are not supported (no daemon writes any).
std::optional<double> SampleValue(std::string_view text, std::string_view name, const metrics::Labels& labels = {});

}  // namespace geodesic::testing
