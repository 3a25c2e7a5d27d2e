#include "config/config_reader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "entity/entity_id.h"

namespace geodesic::config {

struct ConfigReader::Shared {
  std::string origin;    // file name as given
  std::string base_dir;  // for relative paths
  std::vector<std::string> errors;
};

namespace {

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return absl::StrCat("\"", node.Scalar(), "\"");
    default: return "an undefined value";
  }
}

// The 1-based line a parsed node starts on; 0 for nodes the parser did not make.
int LineOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() || mark.line < 0 ? 0 : mark.line + 1;
}

// "origin:line: " or "origin: " when the line is unknown.
std::string Where(const std::string& origin, int line) {
  return line > 0 ? absl::StrCat(origin, ":", line, ": ") : absl::StrCat(origin, ": ");
}

absl::StatusOr<YAML::Node> ParseYaml(const std::string& text, const std::string& origin) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(origin, e.mark.is_null() ? 0 : e.mark.line + 1), "not valid YAML: ",
                     e.msg));
  }
}

}  // namespace

absl::StatusOr<ConfigReader> ConfigReader::FromString(const std::string& text,
                                                      std::string origin) {
  auto root = ParseYaml(text, origin);
  if (!root.ok()) return root.status();
  if (!root->IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat(
        Where(origin, LineOf(*root)), "the top level must be a map of keys, got ", Describe(*root)));
  }
  auto shared = std::make_shared<Shared>();
  shared->origin = std::move(origin);
  shared->base_dir = std::filesystem::path(shared->origin).parent_path().string();
  const int line = LineOf(*root);
  return ConfigReader(std::move(shared), std::make_unique<YAML::Node>(*root), "", line);
}

absl::StatusOr<ConfigReader> ConfigReader::OpenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  std::stringstream text;
  text << in.rdbuf();
  return FromString(text.str(), path);
}

ConfigReader::ConfigReader(std::shared_ptr<Shared> shared, std::unique_ptr<YAML::Node> node,
                           std::string path, int line)
    : shared_(std::move(shared)), node_(std::move(node)), path_(std::move(path)), line_(line) {}

ConfigReader::ConfigReader(const ConfigReader& other)
    : shared_(other.shared_),
      node_(std::make_unique<YAML::Node>(*other.node_)),
      path_(other.path_),
      line_(other.line_),
      read_keys_(other.read_keys_) {}

ConfigReader& ConfigReader::operator=(const ConfigReader& other) {
  if (this != &other) {
    shared_ = other.shared_;
    node_ = std::make_unique<YAML::Node>(*other.node_);
    path_ = other.path_;
    line_ = other.line_;
    read_keys_ = other.read_keys_;
  }
  return *this;
}

ConfigReader::~ConfigReader() = default;

const std::string& ConfigReader::path() const { return path_; }
const std::string& ConfigReader::origin() const { return shared_->origin; }
int ConfigReader::line() const { return line_; }

std::string ConfigReader::KeyPath(const std::string& key) const {
  return path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key);
}

void ConfigReader::AddErrorAtLine(int line, const std::string& key_path,
                                  const std::string& message) {
  shared_->errors.push_back(absl::StrCat(Where(shared_->origin, line), key_path, ": ", message));
}

void ConfigReader::AddError(const std::string& key, const std::string& message) {
  int line = line_;
  if (!key.empty() && node_->IsMap()) {
    const YAML::Node& map = *node_;
    const YAML::Node child = map[key];
    if (child.IsDefined() && LineOf(child) > 0) line = LineOf(child);
  }
  AddErrorAtLine(line, key.empty() ? path_ : KeyPath(key), message);
}

bool ConfigReader::Has(const std::string& key) const {
  return node_->IsMap() && (*node_)[std::string(key)].IsDefined() &&
         !(*node_)[std::string(key)].IsNull();
}

std::vector<std::string> ConfigReader::Keys() const {
  std::vector<std::string> keys;
  if (!node_->IsMap()) return keys;
  for (const auto& entry : *node_) keys.push_back(entry.first.Scalar());
  return keys;
}

std::optional<YAML::Node> ConfigReader::Lookup(const std::string& key) {
  read_keys_.emplace_back(key);
  if (!node_->IsMap()) return std::nullopt;
  YAML::Node child = (*node_)[std::string(key)];
  if (!child.IsDefined() || child.IsNull()) return std::nullopt;
  return child;
}

bool ConfigReader::ReadScalar(const std::string& key, std::string& out, const std::string& expected) {
  auto node = Lookup(key);
  if (!node) return false;
  if (!node->IsScalar()) {
    AddError(key, absl::StrCat("expected ", expected, ", got ", Describe(*node)));
    return false;
  }
  out = node->Scalar();
  return true;
}

std::string ConfigReader::RequiredString(const std::string& key) {
  std::string value;
  if (!Has(key)) {
    read_keys_.emplace_back(key);
    AddError(key, "required key is missing");
    return value;
  }
  if (ReadScalar(key, value, "a string") && value.empty()) AddError(key, "must not be empty");
  return value;
}

std::string ConfigReader::OptionalString(const std::string& key, std::string fallback) {
  std::string value;
  return ReadScalar(key, value, "a string") ? value : fallback;
}

std::string ConfigReader::RequiredId(const std::string& key) {
  std::string value = RequiredString(key);
  if (!value.empty() && !entity::IsValidEntityId(value)) {
    AddError(key, absl::StrCat("\"", value, "\" is not a valid id (", std::string(entity::kEntityIdRule), ")"));
  }
  return value;
}

std::string ConfigReader::RequiredPath(const std::string& key) {
  std::string value = RequiredString(key);
  if (value.empty() || shared_->base_dir.empty() || value.front() == '/') return value;
  return (std::filesystem::path(shared_->base_dir) / value).string();
}

std::string ConfigReader::OptionalPath(const std::string& key, std::string fallback) {
  if (!Has(key)) {
    read_keys_.emplace_back(key);
    return fallback;
  }
  return RequiredPath(key);
}

namespace {

std::optional<uint64_t> ParseUint(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c == '_') continue;
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

std::optional<double> ParseDouble(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t used = 0;
  try {
    const double value = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(value)) return std::nullopt;
    return value;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

uint64_t ConfigReader::RequiredUint(const std::string& key, uint64_t min, uint64_t max) {
  if (!Has(key)) {
    read_keys_.emplace_back(key);
    AddError(key, "required key is missing");
    return min;
  }
  return OptionalUint(key, min, min, max);
}

uint64_t ConfigReader::OptionalUint(const std::string& key, uint64_t fallback, uint64_t min,
                                    uint64_t max) {
  std::string text;
  if (!ReadScalar(key, text, "an unsigned integer")) return fallback;
  auto value = ParseUint(text);
  if (!value) {
    AddError(key, absl::StrCat("expected an unsigned integer, got \"", text, "\""));
    return fallback;
  }
  if (*value < min || *value > max) {
    AddError(key, absl::StrCat(*value, " is out of range [", min, ", ", max, "]"));
    return fallback;
  }
  return *value;
}

double ConfigReader::RequiredDouble(const std::string& key, double min, double max) {
  if (!Has(key)) {
    read_keys_.emplace_back(key);
    AddError(key, "required key is missing");
    return min;
  }
  return OptionalDouble(key, min, min, max);
}

double ConfigReader::OptionalDouble(const std::string& key, double fallback, double min,
                                    double max) {
  std::string text;
  if (!ReadScalar(key, text, "a number")) return fallback;
  auto value = ParseDouble(text);
  if (!value) {
    AddError(key, absl::StrCat("expected a number, got \"", text, "\""));
    return fallback;
  }
  if (*value < min || *value > max) {
    AddError(key, absl::StrCat(text, " is out of range [", min, ", ", max, "]"));
    return fallback;
  }
  return *value;
}

bool ConfigReader::OptionalBool(const std::string& key, bool fallback) {
  std::string text;
  if (!ReadScalar(key, text, "true or false")) return fallback;
  if (text == "true") return true;
  if (text == "false") return false;
  AddError(key, absl::StrCat("expected true or false, got \"", text, "\""));
  return fallback;
}

std::vector<std::string> ConfigReader::OptionalStringList(const std::string& key) {
  std::vector<std::string> values;
  auto node = Lookup(key);
  if (!node) return values;
  if (!node->IsSequence()) {
    AddError(key, absl::StrCat("expected a list of strings, got ", Describe(*node)));
    return values;
  }
  for (size_t i = 0; i < node->size(); ++i) {
    const YAML::Node item = (*node)[i];
    if (!item.IsScalar() || item.Scalar().empty()) {
      AddErrorAtLine(LineOf(item) > 0 ? LineOf(item) : LineOf(*node),
                     absl::StrCat(KeyPath(key), "[", i, "]"),
                     absl::StrCat("expected a non-empty string, got ", Describe(item)));
      continue;
    }
    values.push_back(item.Scalar());
  }
  return values;
}

ConfigReader ConfigReader::RequiredMap(const std::string& key) {
  auto child = OptionalMap(key);
  if (child) return *std::move(child);
  if (!Has(key)) AddError(key, "required key is missing");
  return ConfigReader(shared_, std::make_unique<YAML::Node>(YAML::NodeType::Map), KeyPath(key),
                      line_);
}

std::optional<ConfigReader> ConfigReader::OptionalMap(const std::string& key) {
  auto node = Lookup(key);
  if (!node) return std::nullopt;
  if (!node->IsMap()) {
    AddError(key, absl::StrCat("expected a map, got ", Describe(*node)));
    return std::nullopt;
  }
  return ConfigReader(shared_, std::make_unique<YAML::Node>(*node), KeyPath(key),
                      LineOf(*node) > 0 ? LineOf(*node) : line_);
}

std::vector<ConfigReader> ConfigReader::RequiredMapList(const std::string& key) {
  if (!Has(key)) {
    read_keys_.emplace_back(key);
    AddError(key, "required key is missing");
    return {};
  }
  auto items = OptionalMapList(key);
  if (items.empty()) AddError(key, "must list at least one entry");
  return items;
}

std::vector<ConfigReader> ConfigReader::OptionalMapList(const std::string& key) {
  std::vector<ConfigReader> items;
  auto node = Lookup(key);
  if (!node) return items;
  if (!node->IsSequence()) {
    AddError(key, absl::StrCat("expected a list, got ", Describe(*node)));
    return items;
  }
  for (size_t i = 0; i < node->size(); ++i) {
    const YAML::Node item = (*node)[i];
    const std::string item_path = absl::StrCat(KeyPath(key), "[", i, "]");
    const int item_line = LineOf(item) > 0 ? LineOf(item) : LineOf(*node);
    if (!item.IsMap()) {
      AddErrorAtLine(item_line, item_path, absl::StrCat("expected a map, got ", Describe(item)));
      continue;
    }
    items.push_back(
        ConfigReader(shared_, std::make_unique<YAML::Node>(item), item_path, item_line));
  }
  return items;
}

void ConfigReader::RejectUnknownKeys() {
  if (!node_->IsMap()) return;
  for (const auto& entry : *node_) {
    const std::string key = entry.first.Scalar();
    if (std::find(read_keys_.begin(), read_keys_.end(), key) == read_keys_.end()) {
      const int line = LineOf(entry.first) > 0 ? LineOf(entry.first) : line_;
      AddErrorAtLine(line, KeyPath(key), "unknown key (a typo?)");
    }
  }
}

size_t ConfigReader::error_count() const { return shared_->errors.size(); }

absl::Status ConfigReader::status() const {
  if (shared_->errors.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(shared_->errors, "\n"));
}

}  // namespace geodesic::config
