#include "tests/support/metrics_text.h"

#include <regex>
#include <sstream>

namespace geodesic::testing {

std::optional<double> SampleValue(std::string_view text, std::string_view name, const metrics::Labels& labels) {
  static const std::regex kLabel("([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\"");
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    const std::string series = line.substr(0, space);
    const size_t brace = series.find('{');
    if (series.substr(0, brace) != name) continue;
    metrics::Labels found;
    if (brace != std::string::npos) {
      const std::string inside = series.substr(brace);
      for (std::sregex_iterator it(inside.begin(), inside.end(), kLabel), end; it != end; ++it) {
        found[(*it)[1]] = (*it)[2];
      }
    }
    if (found == labels) return std::stod(line.substr(space + 1));
  }
  return std::nullopt;
}

}  // namespace geodesic::testing
