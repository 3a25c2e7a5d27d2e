#include "cli/output.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "google/protobuf/util/json_util.h"
#include "yaml-cpp/yaml.h"
#include "text/json_quote.h"

namespace geodesic::cli {
namespace {

bool IsPlainInteger(const std::string& text) {
  size_t i = text[0] == '-' ? 1 : 0;
  if (i >= text.size()) return false;
  if (text[i] == '0' && text.size() > i + 1) return false;  // "007": YAML 1.1 reads octal
  for (; i < text.size(); ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

// Whether a JSON string, printed plain, would read back as something other
// than that string. Integers stay plain: protobuf JSON quotes every 64-bit
// integer, and a YAML reader should see a number.
bool NeedsQuotes(const std::string& text) {
  if (text.empty()) return true;
  static const auto* special = new std::set<std::string>{"true", "false", "yes", "no",   "on",    "off", "y",
                                                         "n",    "null",  "~",   ".inf", "-.inf", ".nan"};
  if (special->count(absl::AsciiStrToLower(text))) return true;
  if (IsPlainInteger(text)) return false;
  double ignored;
  return absl::SimpleAtod(text, &ignored);  // "1.5", "1e3": YAML reads a float
}

void Emit(YAML::Emitter& out, const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      if (node.size() == 0) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& entry : node) {
        out << YAML::Key;
        Emit(out, entry.first);
        out << YAML::Value;
        Emit(out, entry.second);
      }
      out << YAML::EndMap;
      return;
    case YAML::NodeType::Sequence:
      if (node.size() == 0) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      out << YAML::BeginSeq;
      for (const auto& item : node) Emit(out, item);
      out << YAML::EndSeq;
      return;
    case YAML::NodeType::Scalar:
      // The loader tags a quoted (JSON string) scalar "!", a plain one "?".
      if (node.Tag() == "!" && NeedsQuotes(node.Scalar())) {
        out << YAML::DoubleQuoted << node.Scalar();
      } else {
        out << node.Scalar();
      }
      return;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: out << YAML::Null; return;
  }
}


void EmitJson(const YAML::Node& node, int indent, std::string& out) {
  const std::string pad(indent + 2, ' ');
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      if (node.size() == 0) {
        out += "{}";
        return;
      }
      out += "{\n";
      bool first = true;
      for (const auto& entry : node) {
        if (!first) out += ",\n";
        first = false;
        out += pad + text::JsonQuote(entry.first.Scalar()) + ": ";
        EmitJson(entry.second, indent + 2, out);
      }
      out += "\n" + std::string(indent, ' ') + "}";
      return;
    }
    case YAML::NodeType::Sequence: {
      if (node.size() == 0) {
        out += "[]";
        return;
      }
      out += "[\n";
      bool first = true;
      for (const auto& item : node) {
        if (!first) out += ",\n";
        first = false;
        out += pad;
        EmitJson(item, indent + 2, out);
      }
      out += "\n" + std::string(indent, ' ') + "]";
      return;
    }
    case YAML::NodeType::Scalar: out += node.Tag() == "?" ? node.Scalar() : text::JsonQuote(node.Scalar()); return;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: out += "null"; return;
  }
}

YAML::Node Tagged(const std::string& value, const char* tag) {
  YAML::Node node(value);
  node.SetTag(tag);
  return node;
}

}  // namespace

YAML::Node MessageNode(const google::protobuf::Message& message) {
  try {
    return YAML::Load(ToJson(message));
  } catch (const YAML::Exception&) {
    return StringNode(message.ShortDebugString());  // not reached: ToJson yields JSON
  }
}

YAML::Node StringNode(const std::string& value) { return Tagged(value, "!"); }

YAML::Node NumberNode(double value) {
  if (!std::isfinite(value)) return Tagged("null", "?");
  if (value == std::trunc(value) && std::fabs(value) < 1e15) return Tagged(FormatNumber(value), "?");
  // Documents are for scripts: the shortest text that reads back as the same double.
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof text, value);
  return Tagged(std::string(text, error == std::errc() ? end : text), "?");
}

YAML::Node BoolNode(bool value) { return Tagged(value ? "true" : "false", "?"); }

YAML::Node StringsNode(const std::vector<std::string>& values) {
  YAML::Node node(YAML::NodeType::Sequence);
  for (const auto& value : values) node.push_back(StringNode(value));
  return node;
}

std::string NodeToJson(const YAML::Node& node) {
  std::string out;
  EmitJson(node, 0, out);
  return out + "\n";
}

std::string NodeToYaml(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetMapFormat(YAML::Block);
  out.SetSeqFormat(YAML::Block);
  Emit(out, node);
  if (!out.good()) return NodeToJson(node);  // JSON is YAML too
  return absl::StrCat(out.c_str(), "\n");
}

void PrintDocument(const YAML::Node& node, OutputFormat format) {
  std::cout << (format == OutputFormat::kYaml ? NodeToYaml(node) : NodeToJson(node));
}

std::string ToJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  // Cannot fail for a message of a generated type (no Any with unknown types here).
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  if (json.empty() || json.back() != '\n') json += '\n';
  return json;
}

absl::StatusOr<std::string> JsonToYaml(const std::string& json) {
  try {
    return NodeToYaml(YAML::Load(json));
  } catch (const YAML::Exception& error) {
    return absl::InvalidArgumentError(absl::StrCat("not JSON: ", error.what()));
  }
}

std::string ToYaml(const google::protobuf::Message& message) { return NodeToYaml(MessageNode(message)); }

void PrintStructured(const google::protobuf::Message& message, OutputFormat format) {
  std::cout << (format == OutputFormat::kYaml ? ToYaml(message) : ToJson(message));
}

std::string FormatUnixMs(int64_t unix_ms) {
  if (unix_ms == 0) return "-";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMillis(unix_ms), absl::UTCTimeZone());
}

std::string FormatNumber(double value) {
  if (std::isfinite(value) && value == std::trunc(value) && std::fabs(value) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  return absl::StrFormat("%.6g", value);
}

int PrintError(const absl::Status& status) {
  std::fprintf(stderr, "tectl: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace geodesic::cli
