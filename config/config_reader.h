#pragma once
// Reads a YAML (or JSON) configuration file into a typed structure, collecting
// every error with the file, the 1-based line and the key it concerns:
//
//   pathcomp.yaml:4: tls.cert: required key is missing
//   agent.yaml:9: links[2].rtt_us: expected an unsigned integer, got "fast"
//
// The line is the value's when the key is present, else the enclosing map's
// (for a missing key). Errors without a position ("cannot open the file") are
// "file: message".
//
// Usage: open the file, read each key through the reader (required or with a
// default), call RejectUnknownKeys() on every map you read, then status().
// A reader and the readers it hands out share one error list; they are cheap
// values. Not thread-safe; use during load only.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace YAML {
class Node;
}

namespace geodesic::config {

class ConfigReader {
 public:
  // Opens and parses `path`; errors name the file (missing, unreadable, bad YAML,
  // not a map at the top).
  [[nodiscard]] static absl::StatusOr<ConfigReader> OpenFile(const std::string& path);
  // Parses `text`; `origin` stands in for the file name in errors.
  [[nodiscard]] static absl::StatusOr<ConfigReader> FromString(const std::string& text,
                                                               std::string origin);

  ConfigReader(const ConfigReader&);
  ConfigReader& operator=(const ConfigReader&);
  ~ConfigReader();

  bool Has(const std::string& key) const;
  // The keys of this map, in file order (for maps keyed by id).
  std::vector<std::string> Keys() const;

  std::string RequiredString(const std::string& key);
  std::string OptionalString(const std::string& key, std::string fallback);
  // Like RequiredString, but the value must be a valid entity id ([a-z0-9][a-z0-9._-]{0,62}).
  std::string RequiredId(const std::string& key);
  // A path; relative paths are resolved against the config file's directory.
  std::string RequiredPath(const std::string& key);
  std::string OptionalPath(const std::string& key, std::string fallback);
  uint64_t RequiredUint(const std::string& key, uint64_t min, uint64_t max);
  uint64_t OptionalUint(const std::string& key, uint64_t fallback, uint64_t min, uint64_t max);
  double RequiredDouble(const std::string& key, double min, double max);
  double OptionalDouble(const std::string& key, double fallback, double min, double max);
  bool OptionalBool(const std::string& key, bool fallback);
  std::vector<std::string> OptionalStringList(const std::string& key);

  // A nested map. When missing or not a map, records an error and returns an
  // empty reader (whose reads then record "missing" errors under the key).
  ConfigReader RequiredMap(const std::string& key);
  std::optional<ConfigReader> OptionalMap(const std::string& key);
  // Each element of a list of maps; missing = empty list when optional.
  std::vector<ConfigReader> RequiredMapList(const std::string& key);
  std::vector<ConfigReader> OptionalMapList(const std::string& key);

  // Records an error for every key of this map that was never read.
  void RejectUnknownKeys();
  // Records an error about `key` of this map (for checks across keys).
  void AddError(const std::string& key, const std::string& message);

  // The key path of this map ("links[2]"), empty at the top.
  const std::string& path() const;
  // The 1-based line where this map starts in the file; 0 when unknown.
  int line() const;
  const std::string& origin() const;
  // OK, or InvalidArgument listing every error, one per line.
  [[nodiscard]] absl::Status status() const;
  // How many errors have been recorded so far (by this reader and those it
  // shares its list with): lets a caller tell whether a read succeeded.
  size_t error_count() const;

 private:
  struct Shared;
  ConfigReader(std::shared_ptr<Shared> shared, std::unique_ptr<YAML::Node> node, std::string path,
               int line);
  std::string KeyPath(const std::string& key) const;
  // Records "origin:line: key_path: message" (no line when `line` is 0).
  void AddErrorAtLine(int line, const std::string& key_path, const std::string& message);
  std::optional<YAML::Node> Lookup(const std::string& key);
  bool ReadScalar(const std::string& key, std::string& out, const std::string& expected);

  std::shared_ptr<Shared> shared_;
  std::unique_ptr<YAML::Node> node_;
  std::string path_;
  int line_ = 0;
  std::vector<std::string> read_keys_;
};

}  // namespace geodesic::config
