// geodesic-metrics-doc: the metric reference of every daemon, generated from
// the families each daemon declares (metrics::Registry::Families()), as the
// Markdown the README shows between its "metrics:begin" and "metrics:end"
// markers. tests/metrics/metrics_doc_test.py fails when the README differs;
// `make metrics-doc` rewrites it.
//
// Usage: geodesic-metrics-doc            (prints the Markdown)
//        geodesic-metrics-doc --names    (one metric name per line, with the
//                                         histogram's _bucket/_count/_sum)
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "metrics/metrics_registry.h"
#include "pathcomp/service/pathcomp_metrics.h"
#include "routerd/routerd_metrics.h"
#include "site_agent/agent_metrics.h"

namespace {

using geodesic::metrics::FamilyDoc;
using geodesic::metrics::Kind;
using geodesic::metrics::Registry;

struct DaemonFamilies {
  std::string daemon;
  std::string what;
  std::vector<FamilyDoc> families;
};

std::vector<DaemonFamilies> EveryDaemon() {
  std::vector<DaemonFamilies> daemons;
  {
    Registry registry("pathcomp", {{"version", ""}, {"replica", ""}});
    geodesic::pathcomp::PathcompMetrics declared(registry);
    daemons.push_back({"pathcomp", "the controller (one series set per replica)", registry.Families()});
  }
  {
    Registry registry("site_agent", {{"version", ""}, {"facility", ""}});
    geodesic::site_agent::AgentMetrics declared(registry);
    daemons.push_back({"site_agent", "a facility's measurements", registry.Families()});
  }
  {
    Registry registry("routerd", {{"version", ""}, {"facility", ""}});
    geodesic::routerd::RouterdMetrics declared(registry);
    daemons.push_back({"routerd", "a facility's route injection", registry.Families()});
  }
  return daemons;
}

std::string Cell(const std::string& text) { return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}}); }

}  // namespace

int main(int argc, char** argv) {
  const bool names_only = argc == 2 && std::string(argv[1]) == "--names";
  if (argc > 2 || (argc == 2 && !names_only)) {
    std::fprintf(stderr, "usage: geodesic-metrics-doc [--names]\n");
    return 2;
  }
  for (const DaemonFamilies& daemon : EveryDaemon()) {
    if (names_only) {
      for (const FamilyDoc& family : daemon.families) {
        if (family.kind == Kind::kHistogram) {
          for (const char* suffix : {"_bucket", "_count", "_sum"}) std::printf("%s%s\n", family.name.c_str(), suffix);
        } else {
          std::printf("%s\n", family.name.c_str());
        }
      }
      continue;
    }
    std::printf("#### %s: %s\n\n| Metric | Type | Labels | Meaning |\n|---|---|---|---|\n", daemon.daemon.c_str(),
                daemon.what.c_str());
    for (const FamilyDoc& family : daemon.families) {
      std::printf("| `%s` | %s | %s | %s |\n", family.name.c_str(), std::string(KindName(family.kind)).c_str(),
                  family.labels.empty() ? "" : ("`" + absl::StrJoin(family.labels, "`, `") + "`").c_str(),
                  Cell(family.help).c_str());
    }
    std::printf("\n");
  }
  return 0;
}
