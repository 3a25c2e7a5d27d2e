#include "topology/graphml.h"

#include <expat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "topology/internal/imported_network.h"
#include "topology/internal/line_errors.h"
#include "topology/internal/text_fields.h"

namespace geodesic::topology {
namespace {

using internal::LineErrors;

constexpr uint32_t kMaxMetric = 16777215;
constexpr double kMaxGbps = 1e6;

struct DataValue {
  std::string text;
  size_t line = 0;
};

// A <node> or an <edge>, with its <data> by key id.
struct Element {
  size_t line = 0;
  std::string id;                      // nodes
  std::string source, target;          // edges
  bool directed = false;               // edges
  std::map<std::string, DataValue> data;
};

struct KeyDeclaration {
  std::string domain;  // the "for" attribute: node, edge, graph, all
  std::string name;    // attr.name, lowercased
};

const char* Attribute(const XML_Char** attributes, const char* name) {
  for (size_t i = 0; attributes[i] != nullptr; i += 2) {
    if (std::string_view(attributes[i]) == name) return attributes[i + 1];
  }
  return nullptr;
}

// The element name without a namespace prefix.
std::string_view LocalName(const XML_Char* name) {
  std::string_view view(name);
  const size_t colon = view.rfind(':');
  return colon == std::string_view::npos ? view : view.substr(colon + 1);
}

// Collects the graph's keys, nodes and edges as expat streams the file.
class GraphmlScanner {
 public:
  GraphmlScanner(std::string path, LineErrors& errors)
      : path_(std::move(path)), errors_(errors), parser_(XML_ParserCreate(nullptr)) {
    XML_SetUserData(parser_.get(), this);
    XML_SetElementHandler(parser_.get(), &GraphmlScanner::OnStart, &GraphmlScanner::OnEnd);
    XML_SetCharacterDataHandler(parser_.get(), &GraphmlScanner::OnText);
  }

  void Scan(const std::string& text) {
    if (XML_Parse(parser_.get(), text.data(), static_cast<int>(text.size()), XML_TRUE) ==
        XML_STATUS_ERROR) {
      errors_.Add(path_, XML_GetCurrentLineNumber(parser_.get()),
                  absl::StrCat("not well-formed XML: ",
                               XML_ErrorString(XML_GetErrorCode(parser_.get()))));
      return;
    }
    if (graphs_ == 0) errors_.Add(path_, 0, "no <graph> element");
  }

  std::map<std::string, KeyDeclaration> keys;
  std::vector<Element> nodes;
  std::vector<Element> edges;
  size_t graph_line = 0;

 private:
  struct ParserFree {
    void operator()(XML_Parser parser) const { XML_ParserFree(parser); }
  };

  static void XMLCALL OnStart(void* self, const XML_Char* name, const XML_Char** attributes) {
    static_cast<GraphmlScanner*>(self)->Start(LocalName(name), attributes);
  }
  static void XMLCALL OnEnd(void* self, const XML_Char* name) {
    static_cast<GraphmlScanner*>(self)->End(LocalName(name));
  }
  static void XMLCALL OnText(void* self, const XML_Char* text, int size) {
    auto* scanner = static_cast<GraphmlScanner*>(self);
    if (scanner->data_ != nullptr) scanner->data_->text.append(text, static_cast<size_t>(size));
  }

  size_t Line() const { return XML_GetCurrentLineNumber(parser_.get()); }
  void Error(const std::string& reason) { errors_.Add(path_, Line(), reason); }
  std::string_view Parent() const { return stack_.empty() ? "" : std::string_view(stack_.back()); }

  void Start(std::string_view name, const XML_Char** attributes) {
    // A copy: emplace_back below may reallocate stack_, and a view into the
    // old last element would dangle.
    const std::string parent(Parent());
    stack_.emplace_back(name);
    if (stack_.size() == 1) {
      if (name != "graphml") {
        Error(absl::StrCat("the root element is <", std::string(name), ">, not <graphml>"));
      }
      return;
    }
    if (name == "key" && parent == "graphml") {
      const char* id = Attribute(attributes, "id");
      const char* domain = Attribute(attributes, "for");
      const char* attr_name = Attribute(attributes, "attr.name");
      if (id == nullptr) return Error("<key> without an id");
      keys[id] = KeyDeclaration{domain ? domain : "all",
                                absl::AsciiStrToLower(attr_name ? attr_name : "")};
    } else if (name == "graph") {
      if (parent != "graphml") return Error("nested graphs are not supported");
      if (++graphs_ > 1) return Error("more than one <graph> in the file");
      graph_line = Line();
      const char* edge_default = Attribute(attributes, "edgedefault");
      directed_default_ = edge_default != nullptr && std::string_view(edge_default) == "directed";
    } else if (name == "node" && parent == "graph" && stack_.size() == 3) {
      Element node;
      node.line = Line();
      const char* id = Attribute(attributes, "id");
      if (id == nullptr || *id == '\0') Error("<node> without an id");
      node.id = id ? id : "";
      nodes.push_back(std::move(node));
      element_ = &nodes.back();
    } else if (name == "edge" && parent == "graph" && stack_.size() == 3) {
      Element edge;
      edge.line = Line();
      const char* source = Attribute(attributes, "source");
      const char* target = Attribute(attributes, "target");
      if (source == nullptr || target == nullptr) Error("<edge> without source and target");
      edge.source = source ? source : "";
      edge.target = target ? target : "";
      const char* directed = Attribute(attributes, "directed");
      edge.directed = directed ? std::string_view(directed) == "true" : directed_default_;
      edges.push_back(std::move(edge));
      element_ = &edges.back();
    } else if (name == "hyperedge") {
      Error("hyperedges are not supported");
    } else if (name == "data" && element_ != nullptr && (parent == "node" || parent == "edge")) {
      const char* key = Attribute(attributes, "key");
      if (key == nullptr) return Error("<data> without a key");
      data_ = &element_->data[key];
      *data_ = DataValue{"", Line()};
    }
  }

  void End(std::string_view name) {
    stack_.pop_back();
    if (name == "data") data_ = nullptr;
    if (name == "node" || name == "edge") element_ = nullptr;
  }

  std::string path_;
  LineErrors& errors_;
  std::unique_ptr<XML_ParserStruct, ParserFree> parser_;
  std::vector<std::string> stack_;
  size_t graphs_ = 0;
  bool directed_default_ = false;
  // The open <node> or <edge>: only graphml > graph > node|edge are read, so
  // the vectors do not grow while one is open.
  Element* element_ = nullptr;
  DataValue* data_ = nullptr;   // the open <data>
};

// The key ids declared for `domain` (or for all) under `attr_name`.
std::vector<std::string> KeysNamed(const std::map<std::string, KeyDeclaration>& keys,
                                   std::string_view domain, std::string_view attr_name) {
  std::vector<std::string> ids;
  for (const auto& [id, key] : keys) {
    if ((key.domain == domain || key.domain == "all") && key.name == attr_name) ids.push_back(id);
  }
  return ids;
}

const DataValue* Find(const Element& element, const std::vector<std::string>& key_ids) {
  for (const auto& id : key_ids) {
    if (auto it = element.data.find(id); it != element.data.end()) return &it->second;
  }
  return nullptr;
}

class GraphmlImport {
 public:
  GraphmlImport(const std::string& path, GraphmlScanner& scanner, LineErrors& errors)
      : path_(path), scanner_(scanner), errors_(errors) {}

  std::optional<Topology> Build() {
    AddSites();
    const auto capacities = EdgeCapacities();
    if (scanner_.nodes.empty()) errors_.Add(path_, scanner_.graph_line, "the graph has no node");
    if (scanner_.edges.empty()) errors_.Add(path_, scanner_.graph_line, "the graph has no edge");
    if (!errors_.empty()) return std::nullopt;
    const double largest = *std::max_element(capacities.begin(), capacities.end());
    for (size_t i = 0; i < scanner_.edges.size(); ++i) {
      const Element& edge = scanner_.edges[i];
      const size_t a = site_of_.at(edge.source);
      const size_t b = site_of_.at(edge.target);
      const double metric = std::floor(10 * largest / capacities[i]);
      const auto igp_metric = static_cast<uint32_t>(std::clamp<double>(metric, 1, kMaxMetric));
      AddLink(a, b, capacities[i], igp_metric);
      if (!edge.directed) AddLink(b, a, capacities[i], igp_metric);
    }
    return std::move(network_).Finish();
  }

 private:
  void Error(size_t line, const std::string& reason) { errors_.Add(path_, line, reason); }

  std::optional<double> Coordinate(const DataValue& value, const char* name, double limit) {
    const auto number = internal::ParseNumber(internal::Trim(value.text));
    if (!number) {
      Error(value.line, absl::StrCat(name, ": expected a number, got \"", value.text, "\""));
    } else if (*number < -limit || *number > limit) {
      Error(value.line, absl::StrCat(name, ": ", *number, " is out of range [", -limit, ", ",
                                     limit, "]"));
      return std::nullopt;
    }
    return number;
  }

  void AddSites() {
    const auto latitude_keys = KeysNamed(scanner_.keys, "node", "latitude");
    const auto longitude_keys = KeysNamed(scanner_.keys, "node", "longitude");
    const auto label_keys = KeysNamed(scanner_.keys, "node", "label");
    if (scanner_.nodes.size() > internal::kMaxImportedFacilities) {
      Error(scanner_.graph_line, absl::StrCat(scanner_.nodes.size(), " nodes: at most ",
                                              internal::kMaxImportedFacilities, " are supported"));
      return;
    }
    std::map<std::string, size_t> first_line;
    for (const Element& node : scanner_.nodes) {
      if (node.id.empty()) continue;  // already reported
      if (auto [it, inserted] = first_line.emplace(node.id, node.line); !inserted) {
        Error(node.line,
              absl::StrCat("duplicate node id \"", node.id, "\" (first at line ", it->second, ")"));
        continue;
      }
      const DataValue* latitude = Find(node, latitude_keys);
      const DataValue* longitude = Find(node, longitude_keys);
      v1::GeoPosition position;
      if ((latitude == nullptr) != (longitude == nullptr)) {
        Error(node.line, absl::StrCat("node \"", node.id, "\" has ",
                                      latitude ? "Latitude but no Longitude"
                                               : "Longitude but no Latitude"));
        continue;
      }
      if (latitude != nullptr) {
        const auto lat = Coordinate(*latitude, "Latitude", 90);
        const auto lon = Coordinate(*longitude, "Longitude", 180);
        if (!lat || !lon) continue;
        position.set_latitude_deg(*lat);
        position.set_longitude_deg(*lon);
      }
      const DataValue* label = Find(node, label_keys);
      const std::string_view name = label ? internal::Trim(label->text) : std::string_view();
      site_of_[node.id] = network_.AddSite(name.empty() ? node.id : name, position);
    }
  }

  // Each edge's capacity in Gbps, checking its ends on the way.
  std::vector<double> EdgeCapacities() {
    const auto speed_keys = KeysNamed(scanner_.keys, "edge", "linkspeedraw");
    std::vector<double> capacities;
    for (const Element& edge : scanner_.edges) {
      capacities.push_back(kGraphmlDefaultCapacityGbps);
      if (edge.source.empty() || edge.target.empty()) continue;  // already reported
      for (const std::string* end : {&edge.source, &edge.target}) {
        if (!site_of_.count(*end) && !std::any_of(scanner_.nodes.begin(), scanner_.nodes.end(),
                                                  [&](const Element& n) { return n.id == *end; })) {
          Error(edge.line, absl::StrCat("edge ", end == &edge.source ? "source" : "target", " \"",
                                        *end, "\" is not a node of the graph"));
        }
      }
      if (edge.source == edge.target) {
        Error(edge.line, absl::StrCat("self-loop: edge from node \"", edge.source, "\" to itself"));
      }
      if (const DataValue* speed = Find(edge, speed_keys)) {
        const auto bits = internal::ParseNumber(internal::Trim(speed->text));
        if (!bits || *bits <= 0 || *bits / 1e9 > kMaxGbps) {
          Error(speed->line, absl::StrCat("LinkSpeedRaw: expected a positive number of bit/s up "
                                          "to 1e15, got \"", speed->text, "\""));
          continue;
        }
        capacities.back() = *bits / 1e9;
      }
    }
    return capacities;
  }

  void AddLink(size_t src, size_t dst, double capacity_gbps, uint32_t metric) {
    const std::string pair =
        absl::StrCat(network_.site(src).id(), "-", network_.site(dst).id());
    const std::string id =
        network_.link_ids().ClaimUnique(pair.substr(0, internal::kMaxIdSize));
    network_.AddLink(id, src, dst, capacity_gbps, metric, network_.PlacedLatencyUs(src, dst));
  }

  const std::string& path_;
  GraphmlScanner& scanner_;
  LineErrors& errors_;
  internal::ImportedNetwork network_;
  std::map<std::string, size_t> site_of_;  // XML node id -> site index
};

}  // namespace

absl::StatusOr<Topology> LoadGraphml(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  std::stringstream text;
  text << in.rdbuf();
  LineErrors errors;
  GraphmlScanner scanner(path, errors);
  scanner.Scan(text.str());
  if (!errors.empty()) return errors.ToStatus();
  auto topology = GraphmlImport(path, scanner, errors).Build();
  if (!topology) return errors.ToStatus();
  return *std::move(topology);
}

}  // namespace geodesic::topology
