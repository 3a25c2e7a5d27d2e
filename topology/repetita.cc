#include "topology/repetita.h"

#include <fstream>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "topology/internal/imported_network.h"
#include "topology/internal/line_errors.h"
#include "topology/internal/text_fields.h"

namespace geodesic::topology {
namespace {

using internal::Fields;
using internal::IsBlank;
using internal::LineErrors;
using internal::ParseNumber;
using internal::ParseUnsigned;

// The largest capacity or demand a row may give: the project format's 1e6 Gbps.
constexpr double kMaxKbps = 1e12;
constexpr uint64_t kMaxMetric = 16777215;

struct TextFile {
  std::string path;
  std::vector<std::string> lines;  // without line ends; lines[i] is line i + 1
};

absl::StatusOr<TextFile> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  TextFile file{path, {}};
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    file.lines.push_back(std::move(line));
  }
  return file;
}

// absl here predates std::string_view support in StrCat/StrJoin.
std::string Str(std::string_view text) { return std::string(text); }
void JoinView(std::string* out, std::string_view field) { out->append(field); }

// One section of a REPETITA file: "<KEYWORD> <count>", a column header, rows.
struct SectionFormat {
  const char* keyword;  // NODES, EDGES, DEMANDS
  const char* columns;  // "label x y"
  const char* row;      // what a row is, for messages: "node"
};

constexpr SectionFormat kNodes{"NODES", "label x y", "node"};
constexpr SectionFormat kEdges{"EDGES", "label src dest weight bw delay", "edge"};
constexpr SectionFormat kDemands{"DEMANDS", "label src dest bw", "demand"};

struct Row {
  size_t line;  // 1-based
  std::vector<std::string_view> fields;
};

// Reads sections of one file in order, recording "file:line: reason" errors.
class SectionReader {
 public:
  SectionReader(const TextFile& file, LineErrors& errors) : file_(file), errors_(errors) {}

  // Reads the next section's head and rows; nullopt when it is missing,
  // malformed or truncated (the error is recorded). Rows with the wrong
  // number of fields are reported and left out.
  std::optional<std::vector<Row>> Read(const SectionFormat& format, size_t max_count) {
    SkipBlankLines();
    if (next_ >= file_.lines.size()) {
      Error(file_.lines.size(), absl::StrCat("missing ", format.keyword, " section (the file ",
                                             file_.lines.empty() ? "is empty)" : "ends here)"));
      return std::nullopt;
    }
    head_line_ = next_ + 1;
    const size_t head_line = head_line_;
    const auto head = Fields(file_.lines[next_++]);
    std::optional<uint64_t> count;
    if (head.size() == 2 && head[0] == std::string_view(format.keyword)) count = ParseUnsigned(head[1]);
    if (!count) {
      Error(head_line, absl::StrCat("expected \"", format.keyword, " <count>\", got \"",
                                    file_.lines[head_line - 1], "\""));
      return std::nullopt;
    }
    if (*count > max_count) {
      Error(head_line, absl::StrCat(format.keyword, " ", *count, " is more than the ", max_count,
                                    " supported"));
      return std::nullopt;
    }
    announced_ = *count;
    const std::string columns(format.columns);
    if (next_ >= file_.lines.size() || absl::StrJoin(Fields(file_.lines[next_]), " ", JoinView) != columns) {
      if (next_ >= file_.lines.size()) {
        Error(head_line, absl::StrCat("truncated: the column header \"", columns,
                                      "\" is missing after ", format.keyword));
      } else {
        Error(next_ + 1, absl::StrCat("expected the column header \"", columns, "\", got \"",
                                      file_.lines[next_], "\""));
      }
      return std::nullopt;
    }
    ++next_;
    const size_t field_count = Fields(columns).size();
    std::vector<Row> rows;
    for (uint64_t i = 0; i < *count; ++i, ++next_) {
      if (next_ >= file_.lines.size()) {
        Error(head_line, absl::StrCat("truncated: ", format.keyword, " announces ", *count, " ",
                                      format.row, "s, the file ends after ", i, " (line ",
                                      file_.lines.size(), ")"));
        return std::nullopt;
      }
      const std::string& text = file_.lines[next_];
      if (IsBlank(text)) {
        Error(next_ + 1, absl::StrCat("expected ", format.row, " ", i + 1, " of ", *count, " (",
                                      format.keyword, " at line ", head_line,
                                      "), got a blank line"));
        return std::nullopt;
      }
      Row row{next_ + 1, Fields(text)};
      if (row.fields.size() != field_count) {
        Error(row.line, absl::StrCat("wrong field count: expected ", field_count, " (", columns,
                                     "), got ", row.fields.size()));
        continue;
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  // Records an error when anything but blank lines follows the last section read.
  void ExpectEnd(const SectionFormat& last) {
    SkipBlankLines();
    if (next_ < file_.lines.size()) {
      Error(next_ + 1, absl::StrCat("unexpected content after the ", announced_, " ", last.row,
                                    "s that ", last.keyword, " announces: \"",
                                    file_.lines[next_], "\""));
    }
  }

  void Error(size_t line, const std::string& reason) { errors_.Add(file_.path, line, reason); }
  // The line of the last section head read.
  size_t head_line() const { return head_line_; }

 private:
  void SkipBlankLines() {
    while (next_ < file_.lines.size() && IsBlank(file_.lines[next_])) ++next_;
  }

  const TextFile& file_;
  LineErrors& errors_;
  size_t next_ = 0;  // index of the next line to read
  size_t head_line_ = 0;
  uint64_t announced_ = 0;  // the count of the last section head read
};

struct NodeRow {
  std::string label;
  v1::GeoPosition position;
};

struct EdgeRow {
  std::string label;
  size_t src, dst;
  uint32_t metric;
  double capacity_kbps, delay;
};

struct DemandRow {
  std::string label;
  size_t src, dst;
  double demand_kbps;
};

// Field parsers: each returns nullopt after recording why.
class RowParser {
 public:
  RowParser(SectionReader& reader, size_t line) : reader_(reader), line_(line) {}

  std::optional<double> Number(std::string_view column, std::string_view text, double min,
                               double max, std::string_view unit = "") {
    const auto value = ParseNumber(text);
    if (!value) return Fail(column, absl::StrCat("expected a number, got \"", Str(text), "\""));
    if (*value < min || *value > max) {
      return Fail(column, absl::StrCat(Str(text), Str(unit), " is out of range [", min, ", ", max, "]"));
    }
    return value;
  }

  std::optional<double> Positive(std::string_view column, std::string_view text,
                                 std::string_view what) {
    const auto value = ParseNumber(text);
    if (!value) return Fail(column, absl::StrCat("expected a number, got \"", Str(text), "\""));
    if (*value <= 0) return Fail(column, absl::StrCat(Str(what), " must be positive, got ", Str(text)));
    if (*value > kMaxKbps) return Fail(column, absl::StrCat(Str(text), " kbit/s is above 1e12"));
    return value;
  }

  std::optional<size_t> NodeIndex(std::string_view column, std::string_view text,
                                  size_t node_count) {
    const auto value = ParseUnsigned(text);
    if (!value) return Fail(column, absl::StrCat("expected a node index, got \"", Str(text), "\""));
    if (*value >= node_count) {
      return Fail(column, absl::StrCat("node ", *value, " is out of range (NODES ", node_count,
                                       ": 0..", node_count - 1, ")"));
    }
    return static_cast<size_t>(*value);
  }

  std::optional<uint32_t> Metric(std::string_view column, std::string_view text) {
    const auto value = ParseUnsigned(text);
    if (!value) {
      return Fail(column, absl::StrCat("expected an integer metric >= 1, got \"", Str(text), "\""));
    }
    if (*value < 1 || *value > kMaxMetric) {
      return Fail(column, absl::StrCat(*value, " is out of range [1, ", kMaxMetric, "]"));
    }
    return static_cast<uint32_t>(*value);
  }

 private:
  std::nullopt_t Fail(std::string_view column, const std::string& reason) {
    reader_.Error(line_, absl::StrCat(Str(column), ": ", reason));
    return std::nullopt;
  }

  SectionReader& reader_;
  size_t line_;
};

// Records an error for a label seen before in the same section.
bool FirstUse(std::map<std::string, size_t>& seen, const std::string& label, size_t line,
              std::string_view row, SectionReader& reader) {
  auto [it, inserted] = seen.emplace(label, line);
  if (!inserted) {
    reader.Error(line, absl::StrCat("duplicate ", Str(row), " label \"", label, "\" (first at line ",
                                    it->second, ")"));
  }
  return inserted;
}

class RepetitaImport {
 public:
  void ReadGraph(const TextFile& file) {
    SectionReader reader(file, errors_);
    const auto node_rows = reader.Read(kNodes, internal::kMaxImportedFacilities);
    if (!node_rows) return;
    std::map<std::string, size_t> labels;
    for (const auto& row : *node_rows) {
      RowParser parse(reader, row.line);
      const auto lon = parse.Number("x", row.fields[1], -180, 180);
      const auto lat = parse.Number("y", row.fields[2], -90, 90);
      const std::string label(row.fields[0]);
      if (!FirstUse(labels, label, row.line, "node", reader) || !lon || !lat) continue;
      NodeRow node{label, {}};
      node.position.set_latitude_deg(*lat);
      node.position.set_longitude_deg(*lon);
      nodes_.push_back(std::move(node));
    }
    if (node_rows->empty() && errors_.empty()) {
      reader.Error(reader.head_line(), "a topology needs at least one node");
    }
    // Edges name nodes by row order: they can only be checked against every node row.
    if (!errors_.empty()) return;
    const auto edge_rows = reader.Read(kEdges, 10'000'000);
    if (!edge_rows) return;
    if (edge_rows->empty() && errors_.empty()) {
      reader.Error(reader.head_line(), "a topology needs at least one link");
    }
    labels.clear();
    for (const auto& row : *edge_rows) {
      RowParser parse(reader, row.line);
      const auto src = parse.NodeIndex("src", row.fields[1], nodes_.size());
      const auto dst = parse.NodeIndex("dest", row.fields[2], nodes_.size());
      const auto metric = parse.Metric("weight", row.fields[3]);
      const auto capacity = parse.Positive("bw", row.fields[4], "capacity");
      const auto delay = parse.Number("delay", row.fields[5], 0, 1e12);
      const std::string label(row.fields[0]);
      const bool first = FirstUse(labels, label, row.line, "edge", reader);
      if (!first || !src || !dst || !metric || !capacity || !delay) continue;
      if (*src == *dst) {
        // Published datasets have them (Interoute: a node's own two ports
        // joined); a link from a facility to itself carries no traffic.
        warnings_.push_back(absl::StrCat(file.path, ":", row.line, ": self-loop edge ", label,
                                         " (node ", *src, " to itself) skipped: it carries no traffic"));
        continue;
      }
      edges_.push_back(EdgeRow{label, *src, *dst, *metric, *capacity, *delay});
    }
    reader.ExpectEnd(kEdges);
  }

  void ReadDemands(const TextFile& file) {
    SectionReader reader(file, errors_);
    const auto demand_rows = reader.Read(kDemands, 100'000'000);
    if (!demand_rows) return;
    std::map<std::string, size_t> labels;
    for (const auto& row : *demand_rows) {
      RowParser parse(reader, row.line);
      const auto src = parse.NodeIndex("src", row.fields[1], nodes_.size());
      const auto dst = parse.NodeIndex("dest", row.fields[2], nodes_.size());
      const auto demand = parse.Number("bw", row.fields[3], 0, kMaxKbps, " kbit/s");
      const std::string label(row.fields[0]);
      const bool first = FirstUse(labels, label, row.line, "demand", reader);
      if (src && dst && *src == *dst) {
        reader.Error(row.line, absl::StrCat("demand ", label, " goes from node ", *src,
                                            " to itself"));
        continue;
      }
      if (!first || !src || !dst || !demand) continue;
      demands_.push_back(DemandRow{label, *src, *dst, *demand});
    }
    reader.ExpectEnd(kDemands);
  }

  const LineErrors& errors() const { return errors_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  Topology Build() && {
    internal::ImportedNetwork network;
    for (const auto& node : nodes_) network.AddSite(node.label, node.position);
    const auto link_ids = EdgeIds(network);
    for (size_t i = 0; i < edges_.size(); ++i) {
      const EdgeRow& edge = edges_[i];
      std::optional<uint64_t> latency = network.PlacedLatencyUs(edge.src, edge.dst);
      if (!latency && edge.delay > 0) latency = FiberLatencyUs(edge.delay * kRepetitaKmPerDelayUnit);
      network.AddLink(link_ids[i], edge.src, edge.dst, edge.capacity_kbps / 1e6, edge.metric,
                      latency);
    }
    for (size_t i = 0; i < demands_.size(); ++i) {
      const DemandRow& demand = demands_[i];
      if (demand.demand_kbps == 0) continue;  // no traffic between this pair
      std::string base = internal::SanitizeId(demand.label);
      if (base.empty()) base = absl::StrCat("demand-", i);
      network.AddElephant(network.workload_ids().ClaimUnique(base), demand.src, demand.dst,
                          demand.demand_kbps / 1e6);
    }
    return std::move(network).Finish();
  }

 private:
  // An edge keeps its sanitized label when no other edge's label maps to the
  // same id; the others are "<src>-<dst>-<n>".
  std::vector<std::string> EdgeIds(internal::ImportedNetwork& network) const {
    std::vector<std::string> ids(edges_.size());
    std::map<std::string, size_t> uses;
    for (size_t i = 0; i < edges_.size(); ++i) {
      ids[i] = internal::SanitizeId(edges_[i].label);
      ++uses[ids[i]];
    }
    for (size_t i = 0; i < edges_.size(); ++i) {
      if (ids[i].empty() || uses[ids[i]] > 1) ids[i].clear();
      else network.link_ids().Claim(ids[i]);
    }
    for (size_t i = 0; i < edges_.size(); ++i) {
      if (!ids[i].empty()) continue;
      const std::string pair =
          absl::StrCat(network.site(edges_[i].src).id(), "-", network.site(edges_[i].dst).id());
      for (size_t n = 1; ids[i].empty(); ++n) {
        const std::string suffix = absl::StrCat("-", n);
        const std::string candidate =
            absl::StrCat(pair.substr(0, internal::kMaxIdSize - suffix.size()), suffix);
        if (network.link_ids().Claim(candidate)) ids[i] = candidate;
      }
    }
    return ids;
  }

  LineErrors errors_;
  std::vector<std::string> warnings_;
  std::vector<NodeRow> nodes_;
  std::vector<EdgeRow> edges_;
  std::vector<DemandRow> demands_;
};

}  // namespace

absl::StatusOr<Topology> LoadRepetita(const std::string& graph_path,
                                      const std::string& demands_path,
                                      std::vector<std::string>* warnings) {
  auto graph = ReadTextFile(graph_path);
  if (!graph.ok()) return graph.status();
  std::optional<TextFile> demands;
  if (!demands_path.empty()) {
    auto read = ReadTextFile(demands_path);
    if (!read.ok()) return read.status();
    demands = *std::move(read);
  }
  RepetitaImport import;
  import.ReadGraph(*graph);
  if (!import.errors().empty()) return import.errors().ToStatus();
  if (demands) import.ReadDemands(*demands);
  if (!import.errors().empty()) return import.errors().ToStatus();
  if (warnings != nullptr) warnings->insert(warnings->end(), import.warnings().begin(), import.warnings().end());
  return std::move(import).Build();
}

}  // namespace geodesic::topology
