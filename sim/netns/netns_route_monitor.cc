#include "sim/netns/netns_route_monitor.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "sim/wait_until.h"

namespace geodesic::sim {
namespace {

// Route types `ip route` prints before the prefix of a route that is not unicast.
constexpr absl::string_view kRouteTypes[] = {"unicast", "local",     "broadcast", "multicast", "throw",
                                            "unreachable", "prohibit", "blackhole", "nat",   "anycast"};

bool IsRouteType(absl::string_view word) {
  for (absl::string_view type : kRouteTypes) {
    if (word == type) return true;
  }
  return false;
}

// Digits [begin, begin + count) of `text` as a number; false when they are not all digits.
bool Digits(absl::string_view text, size_t begin, size_t count, int64_t* value) {
  if (begin + count > text.size()) return false;
  const absl::string_view digits = text.substr(begin, count);
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  return absl::SimpleAtoi(digits, value);
}

// "YYYY-MM-DDTHH:MM:SS.ffffff" (UTC, 1 to 9 fraction digits) as microseconds since the epoch.
bool ParseStamp(absl::string_view stamp, int64_t* unix_us) {
  int64_t year, month, day, hour, minute, second;
  if (stamp.size() < 21 || stamp[4] != '-' || stamp[7] != '-' || stamp[10] != 'T' || stamp[13] != ':' ||
      stamp[16] != ':' || stamp[19] != '.') {
    return false;
  }
  if (!Digits(stamp, 0, 4, &year) || !Digits(stamp, 5, 2, &month) || !Digits(stamp, 8, 2, &day) ||
      !Digits(stamp, 11, 2, &hour) || !Digits(stamp, 14, 2, &minute) || !Digits(stamp, 17, 2, &second)) {
    return false;
  }
  const size_t fraction_digits = stamp.size() - 20;
  int64_t fraction;
  if (fraction_digits > 9 || !Digits(stamp, 20, fraction_digits, &fraction)) return false;
  for (size_t i = fraction_digits; i < 6; ++i) fraction *= 10;
  for (size_t i = 6; i < fraction_digits; ++i) fraction /= 10;
  const std::chrono::year_month_day date{std::chrono::year(static_cast<int>(year)),
                                         std::chrono::month(static_cast<unsigned>(month)),
                                         std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok() || hour > 23 || minute > 59 || second > 60) return false;
  const auto midnight = std::chrono::sys_days(date);
  const std::chrono::microseconds since_epoch = midnight.time_since_epoch() + std::chrono::hours(hour) +
                                                std::chrono::minutes(minute) + std::chrono::seconds(second) +
                                                std::chrono::microseconds(fraction);
  *unix_us = since_epoch.count();
  return true;
}

}  // namespace

absl::StatusOr<RouteChange> ParseRouteMonitorLine(absl::string_view line) {
  RouteChange change;
  change.line = std::string(line);
  const size_t close = line.find(']');
  if (line.empty() || line[0] != '[' || close == absl::string_view::npos ||
      !ParseStamp(line.substr(1, close - 1), &change.unix_us)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a line of `ip -ts -o monitor route` (no [YYYY-MM-DDTHH:MM:SS.ffffff] stamp first): \"",
                     line, "\""));
  }
  std::vector<absl::string_view> words = absl::StrSplit(line.substr(close + 1), ' ', absl::SkipEmpty());
  size_t next = 0;
  if (next < words.size() && words[next] == "Deleted") {
    change.deleted = true;
    ++next;
  }
  if (next < words.size() && IsRouteType(words[next])) ++next;
  if (next >= words.size()) {
    return absl::InvalidArgumentError(absl::StrCat("no route prefix after the stamp: \"", line, "\""));
  }
  const absl::string_view prefix = words[next];
  const bool v6 = absl::StrContains(prefix, ":");
  if (prefix != "default" && !v6 && !absl::StrContains(prefix, ".")) {
    return absl::InvalidArgumentError(absl::StrCat("\"", prefix, "\" is not a route prefix: \"", line, "\""));
  }
  change.prefix = std::string(prefix);
  if (prefix != "default" && !absl::StrContains(prefix, "/")) absl::StrAppend(&change.prefix, v6 ? "/128" : "/32");
  return change;
}

absl::StatusOr<std::vector<RouteChange>> ParseRouteMonitorOutput(absl::string_view output, int64_t since_unix_us) {
  std::vector<RouteChange> changes;
  const size_t complete = output.rfind('\n');
  if (complete == absl::string_view::npos) return changes;
  for (absl::string_view line : absl::StrSplit(output.substr(0, complete), '\n', absl::SkipEmpty())) {
    absl::StatusOr<RouteChange> change = ParseRouteMonitorLine(line);
    if (!change.ok()) return change.status();
    if (change->unix_us >= since_unix_us) changes.push_back(*std::move(change));
  }
  return changes;
}

absl::StatusOr<std::unique_ptr<NetnsRouteMonitor>> NetnsRouteMonitor::Start(const NetnsBackbone& backbone,
                                                                           const std::string& output_dir) {
  std::error_code error;
  std::filesystem::create_directories(output_dir, error);
  if (error) return absl::UnavailableError(absl::StrCat("cannot create ", output_dir, ": ", error.message()));
  std::unique_ptr<NetnsRouteMonitor> monitor(new NetnsRouteMonitor(output_dir));
  for (const NetnsFacility& facility : backbone.facilities()) {
    const std::string path = monitor->OutputPath(facility.id);
    std::filesystem::remove(path, error);  // Changes reads this run's lines only
    absl::StatusOr<ChildProcessPtr> spawned =
        backbone.Spawn(facility.id, {"/usr/bin/env", "TZ=UTC", "ip", "-ts", "-o", "monitor", "route"}, path);
    if (!spawned.ok()) return spawned.status();
    monitor->monitors_[facility.id] = *std::move(spawned);
  }
  for (const NetnsFacility& facility : backbone.facilities()) {
    if (absl::Status heard = monitor->AwaitMarker(backbone, facility.id); !heard.ok()) return heard;
  }
  return monitor;
}

NetnsRouteMonitor::~NetnsRouteMonitor() {
  for (auto& [facility, process] : monitors_) process->Stop();
}

bool NetnsRouteMonitor::IsMarker(const RouteChange& change) {
  return change.prefix == kMarkerPrefix && absl::StrContains(change.line, absl::StrCat(" table ", kMarkerTable, " "));
}

std::string NetnsRouteMonitor::OutputPath(const std::string& facility_id) const {
  return absl::StrCat(output_dir_, "/routes-", facility_id, ".log");
}

absl::Status NetnsRouteMonitor::AwaitMarker(const NetnsBackbone& backbone, const std::string& facility_id) {
  const std::string table = absl::StrCat(kMarkerTable);
  bool added = false;
  absl::Status failed;
  ChildProcess& process = *monitors_[facility_id];
  // Added and removed in turn until the monitor reports it: one made before
  // the monitor listened is not reported.
  const absl::Status heard = WaitUntil(
      absl::StrCat("the route monitor in ", facility_id, " to report its marker route"), std::chrono::seconds(10),
      [&] {
        absl::StatusOr<RunResult> toggled = backbone.Exec(
            facility_id, {"ip", "route", added ? "del" : "add", "blackhole", kMarkerPrefix, "table", table});
        if (!toggled.ok() || toggled->exit_code != 0) {
          failed = toggled.ok() ? absl::InternalError(absl::StrCat("ip route ", added ? "del" : "add", " ",
                                                                   kMarkerPrefix, " in ", facility_id, ": ",
                                                                   toggled->output))
                                : toggled.status();
          return true;
        }
        added = !added;
        if (!process.running()) return true;
        std::ifstream in(OutputPath(facility_id));
        std::stringstream text;
        text << in.rdbuf();
        absl::StatusOr<std::vector<RouteChange>> changes = ParseRouteMonitorOutput(text.str(), 0);
        return changes.ok() && std::any_of(changes->begin(), changes->end(), IsMarker);
      },
      std::chrono::milliseconds(20));
  if (!failed.ok()) return failed;
  if (!process.running()) {
    return absl::UnavailableError(
        absl::StrCat("the route monitor in ", facility_id, " exited; see ", process.log_path()));
  }
  if (added) {
    absl::StatusOr<RunResult> removed =
        backbone.Exec(facility_id, {"ip", "route", "del", "blackhole", kMarkerPrefix, "table", table});
    if (!removed.ok()) return removed.status();
    if (removed->exit_code != 0) {
      return absl::InternalError(
          absl::StrCat("ip route del ", kMarkerPrefix, " table ", table, " in ", facility_id, ": ", removed->output));
    }
  }
  return heard;
}

absl::StatusOr<std::vector<RouteChange>> NetnsRouteMonitor::Changes(const std::string& facility_id,
                                                                    int64_t since_unix_ms) const {
  if (!monitors_.contains(facility_id)) {
    return absl::NotFoundError(absl::StrCat("no route monitor in facility ", facility_id));
  }
  std::ifstream in(OutputPath(facility_id));
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", OutputPath(facility_id)));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<RouteChange>> parsed = ParseRouteMonitorOutput(text.str(), since_unix_ms * 1000);
  if (!parsed.ok()) return parsed.status();
  std::vector<RouteChange> changes;
  for (RouteChange& change : *parsed) {
    if (!IsMarker(change)) changes.push_back(std::move(change));
  }
  return changes;
}

}  // namespace geodesic::sim
