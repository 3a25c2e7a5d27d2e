#include "routerd/suspect_down.h"

#include <algorithm>
#include <cmath>

namespace geodesic::routerd {

SuspectDownFilter::SuspectDownFilter(SuspectDownPolicy policy) : policy_(policy) {}

SuspectDownFilter::Verdict SuspectDownFilter::Update(const DownLinks& reported, const DownLinks& facility_links,
                                                     Clock::time_point now) {
  // Links back up leave the books (and any suspicion); new ones are stamped.
  for (auto it = went_down_.begin(); it != went_down_.end();) {
    if (reported.contains(it->first)) {
      ++it;
    } else {
      suspect_.erase(it->first);
      it = went_down_.erase(it);
    }
  }
  for (const std::string& link : reported) went_down_.try_emplace(link, now);

  DownLinks recent;
  for (const auto& [link, since] : went_down_) {
    if (now - since <= policy_.window) recent.insert(link);
  }
  size_t known = reported.size();
  for (const std::string& link : facility_links) known += reported.contains(link) ? 0 : 1;
  const size_t burst_needs =
      std::max<size_t>(2, static_cast<size_t>(std::ceil(policy_.share * static_cast<double>(known) - 1e-9)));
  const bool burst = recent.size() >= burst_needs;
  const bool all_down = known >= 2 && reported.size() == known && !recent.empty();

  Verdict verdict;
  if (burst || all_down) {
    verdict.held_now = !std::includes(suspect_.begin(), suspect_.end(), recent.begin(), recent.end());
    suspect_reports_ += verdict.held_now ? 1 : 0;
    suspect_.insert(recent.begin(), recent.end());
  }
  verdict.suspect = suspect_;
  for (const std::string& link : reported) {
    if (!suspect_.contains(link)) verdict.repair.insert(link);
  }
  return verdict;
}

}  // namespace geodesic::routerd
