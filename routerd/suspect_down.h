#pragma once
// Tells a facility's real link cuts from a suspect measurement. A site agent
// starved of CPU, a broken probe socket or a paused process reports every
// link of its facility down at once; fiber cuts take one link, or one
// conduit's (SRLG) few, at a time. Local repair acts on real cuts at once and
// holds suspect ones: the routes stay as the plan has them (fail static)
// until the links come back or the controller's next plan decides.
//
// Suspect, among the links reported down:
//  - a burst: at least two links that went down within `window` and make up
//    at least `share` of the facility's links (default 1.0: all of them);
//  - the links of the last `window` when the report leaves every link of the
//    facility down (at least two known links): local repair could then only
//    withdraw everything, and the routers' own next-hop tracking already
//    stops using a link that is really dead.
// One link going down (while others are up) is never suspect.
// Pure: no I/O, no clock of its own (times are arguments), no threads.
// Thread-compatible.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "routerd/local_repair.h"

namespace geodesic::routerd {

struct SuspectDownPolicy {
  double share = 1.0;                       // (0, 1]
  std::chrono::milliseconds window{1000};   // > 0
};

class SuspectDownFilter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit SuspectDownFilter(SuspectDownPolicy policy = {});

  struct Verdict {
    DownLinks repair;   // what local repair acts on: reported down, not suspect
    DownLinks suspect;  // reported down but held
    bool held_now = false;  // this report put links on hold (counted)
  };

  // `reported`: every link reported down now (after applying the report);
  // `facility_links`: every link of the facility routerd knows of (the plan's
  // next hops, links the agent names); links in `reported` count as known.
  Verdict Update(const DownLinks& reported, const DownLinks& facility_links, Clock::time_point now);

  const DownLinks& suspect() const { return suspect_; }
  // Reports that put links on hold, since construction.
  uint64_t suspect_reports() const { return suspect_reports_; }

 private:
  SuspectDownPolicy policy_;
  std::map<std::string, Clock::time_point, std::less<>> went_down_;  // reported down since
  DownLinks suspect_;
  uint64_t suspect_reports_ = 0;
};

}  // namespace geodesic::routerd
