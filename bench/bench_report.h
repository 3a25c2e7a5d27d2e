#pragma once
// What every benchmark of bench/ shares: where the shared WAN data is, the
// median of repeated measurements and the one line per result that `make
// bench` collects:
//   BENCH <name>: ours=<value><unit> <reference>=<value><unit> ratio=<ours/reference>
#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

namespace geodesic::bench {

// ../shared/data/repetita beside the source tree: $GEODESIC_SOURCE_DIR's,
// else `default_source`'s.
inline std::string RepetitaDir(const char* default_source) {
  const char* source = std::getenv("GEODESIC_SOURCE_DIR");
  return std::string(source != nullptr && *source != '\0' ? source : default_source) + "/../shared/data/repetita";
}

// The median of `values` (the mean of the two middle ones for an even count); 0 when empty.
inline double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// Prints one result; both sides in `unit`, with `decimals` digits after the
// point. The ratio has two decimals, or two significant digits below 0.01.
inline void PrintResult(const std::string& name, double ours, const std::string& reference_name,
                        double reference, const std::string& unit, int decimals = 0) {
  const double ratio = ours / reference;
  char ratio_text[32];
  if (ratio != 0 && ratio < 0.01 && ratio > -0.01) {
    snprintf(ratio_text, sizeof ratio_text, "%.2g", ratio);
  } else {
    snprintf(ratio_text, sizeof ratio_text, "%.2f", ratio);
  }
  printf("BENCH %s: ours=%.*f%s %s=%.*f%s ratio=%s\n", name.c_str(), decimals, ours, unit.c_str(),
         reference_name.c_str(), decimals, reference, unit.c_str(), ratio_text);
  fflush(stdout);
}

}  // namespace geodesic::bench
