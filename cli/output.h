#pragma once
// How tectl prints: protobuf messages as JSON or block-style YAML, times and
// numbers for tables, and errors. Thread-compatible.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/options.h"
#include "google/protobuf/message.h"
#include "yaml-cpp/yaml.h"

namespace geodesic::cli {

// Protobuf JSON: field names as in the .proto, every field printed (also the
// ones at their default), indented, ending in a newline.
std::string ToJson(const google::protobuf::Message& message);

// The same content as block-style YAML, ending in a newline. 64-bit integers,
// which protobuf JSON quotes, print as plain numbers; strings YAML would read
// as something else ("true", "null", "", "1.5") are quoted.
std::string ToYaml(const google::protobuf::Message& message);

// JSON text as block-style YAML (as ToYaml). InvalidArgument when `json` does
// not parse.
[[nodiscard]] absl::StatusOr<std::string> JsonToYaml(const std::string& json);

// Documents: ordered trees (yaml-cpp nodes) that print as JSON or YAML alike,
// for output that combines messages with derived values (describe).
// A scalar is a string when tagged "!" and a JSON literal (number, true,
// false, null) when tagged "?", as YAML::Load tags JSON's strings and literals.
YAML::Node MessageNode(const google::protobuf::Message& message);
YAML::Node StringNode(const std::string& value);
YAML::Node NumberNode(double value);  // exact: reads back as the same double
YAML::Node BoolNode(bool value);
YAML::Node StringsNode(const std::vector<std::string>& values);
// JSON (2-space indent) and block-style YAML of a document, ending in a newline.
std::string NodeToJson(const YAML::Node& node);
std::string NodeToYaml(const YAML::Node& node);
// A document as JSON or YAML on stdout. `format` must be kJson or kYaml.
void PrintDocument(const YAML::Node& node, OutputFormat format);

// `message` as JSON or YAML on stdout. `format` must be kJson or kYaml.
void PrintStructured(const google::protobuf::Message& message, OutputFormat format);

// UTC ISO-8601 to the second ("2024-05-01T12:00:05Z"); "-" for 0 (never).
std::string FormatUnixMs(int64_t unix_ms);

// A number the way a table shows it: integers without a fraction, others with
// up to 6 significant digits.
std::string FormatNumber(double value);

// Prints "tectl: <message>" (each further line of a multi-line message as it
// is) on stderr and returns 1, the exit code of a refused or failed command.
int PrintError(const absl::Status& status);

}  // namespace geodesic::cli
