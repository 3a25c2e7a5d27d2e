#include "daemon/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace geodesic::daemon {
namespace {

std::mutex& LogMutex() {
  static std::mutex mu;
  return mu;
}

std::string& DaemonName() {
  static std::string name = "geodesic";
  return name;
}

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
  }
  return "info";
}

bool NeedsQuotes(std::string_view value) {
  if (value.empty()) return true;
  for (char c : value) {
    if (c == ' ' || c == '"' || c == '=' || c == '\n' || c == '\t') return true;
  }
  return false;
}

void Append(std::string& line, std::string_view value) {
  if (!NeedsQuotes(value)) {
    line.append(value);
    return;
  }
  line.push_back('"');
  for (char c : value) {
    if (c == '"' || c == '\\') line.push_back('\\');
    if (c == '\n') {
      line.append("\\n");
      continue;
    }
    line.push_back(c);
  }
  line.push_back('"');
}

}  // namespace

void SetLogDaemonName(std::string name) {
  std::lock_guard lock(LogMutex());
  DaemonName() = std::move(name);
}

void Log(Level level, std::string_view message, std::initializer_list<Field> fields) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[64];
  std::snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(millis));

  std::string line = "ts=";
  line.append(stamp);
  line.append(" level=");
  line.append(LevelName(level));
  std::lock_guard lock(LogMutex());
  line.append(" daemon=");
  Append(line, DaemonName());
  line.append(" msg=");
  Append(line, message);
  for (const auto& [key, value] : fields) {
    line.push_back(' ');
    line.append(key);
    line.push_back('=');
    Append(line, value);
  }
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace geodesic::daemon
