#pragma once
// Reads a YAML configuration file into a typed structure, collecting every
// error with the file and the key it concerns:
//
//   pathcomp.yaml: tls.cert: required key is missing
//   agent.yaml: links[2].rtt_us: expected an unsigned integer, got "fast"
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
  const std::string& origin() const;
  // OK, or InvalidArgument listing every error, one per line.
  [[nodiscard]] absl::Status status() const;

 private:
  struct Shared;
  ConfigReader(std::shared_ptr<Shared> shared, std::unique_ptr<YAML::Node> node, std::string path);
  std::string KeyPath(const std::string& key) const;
  std::optional<YAML::Node> Lookup(const std::string& key);
  bool ReadScalar(const std::string& key, std::string& out, const std::string& expected);

  std::shared_ptr<Shared> shared_;
  std::unique_ptr<YAML::Node> node_;
  std::string path_;
  std::vector<std::string> read_keys_;
};

}  // namespace geodesic::config
