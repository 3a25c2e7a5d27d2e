#include "tests/support/metrics_testing.h"

#include <cstdlib>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "sim/http_get.h"

namespace geodesic::testing {
namespace {

// `k1="v1",k2="v2"` -> labels (values as the text format escapes them: \\, \", \n).
std::optional<metrics::Labels> ParseLabels(const std::string& text) {
  metrics::Labels labels;
  size_t i = 0;
  while (i < text.size()) {
    const size_t equals = text.find('=', i);
    if (equals == std::string::npos || equals + 1 >= text.size() || text[equals + 1] != '"') return std::nullopt;
    const std::string key = text.substr(i, equals - i);
    std::string value;
    size_t j = equals + 2;
    for (; j < text.size() && text[j] != '"'; ++j) {
      if (text[j] == '\\' && j + 1 < text.size()) {
        ++j;
        value += text[j] == 'n' ? '\n' : text[j];
      } else {
        value += text[j];
      }
    }
    if (j >= text.size()) return std::nullopt;
    labels[key] = value;
    i = j + 1;
    if (i < text.size() && text[i] == ',') ++i;
  }
  return labels;
}

}  // namespace

std::optional<double> SeriesValue(const std::string& text, const std::string& name, const metrics::Labels& labels) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#' || line.compare(0, name.size(), name) != 0) continue;
    const std::string rest = line.substr(name.size());
    metrics::Labels found;
    size_t value_at = 0;
    if (!rest.empty() && rest[0] == '{') {
      const size_t close = rest.rfind('}');
      if (close == std::string::npos) continue;
      auto parsed = ParseLabels(rest.substr(1, close - 1));
      if (!parsed) continue;
      found = *std::move(parsed);
      value_at = close + 1;
    }
    if (value_at >= rest.size() || rest[value_at] != ' ') continue;  // another name with this prefix
    if (found != labels) continue;
    return std::strtod(rest.c_str() + value_at + 1, nullptr);
  }
  return std::nullopt;
}

absl::StatusOr<std::string> ScrapeMetrics(const std::string& admin_url) {
  auto answer = sim::HttpGet(admin_url + "/metrics", std::chrono::seconds(2));
  if (!answer.ok()) return answer.status();
  if (answer->status != 200) {
    return absl::UnavailableError(absl::StrCat(admin_url, "/metrics answered ", answer->status));
  }
  return answer->body;
}

std::optional<metrics::FamilyDoc> FindFamily(const metrics::Registry& registry, const std::string& name) {
  for (metrics::FamilyDoc& family : registry.Families()) {
    if (family.name == name) return family;
  }
  return std::nullopt;
}

}  // namespace geodesic::testing
