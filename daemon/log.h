#pragma once
// Structured log lines on stderr, one event per line, logfmt style:
//   ts=2026-12-02T16:40:01.123Z level=info daemon=pathcomp msg="plan published" generation=7
// Thread-safe.
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace geodesic::daemon {

enum class Level { kDebug, kInfo, kWarn, kError };

using Field = std::pair<std::string_view, std::string>;

// Names the process in every line; call once at startup.
void SetLogDaemonName(std::string name);
void Log(Level level, std::string_view message, std::initializer_list<Field> fields = {});

inline void LogInfo(std::string_view message, std::initializer_list<Field> fields = {}) {
  Log(Level::kInfo, message, fields);
}
inline void LogWarn(std::string_view message, std::initializer_list<Field> fields = {}) {
  Log(Level::kWarn, message, fields);
}
inline void LogError(std::string_view message, std::initializer_list<Field> fields = {}) {
  Log(Level::kError, message, fields);
}

}  // namespace geodesic::daemon
