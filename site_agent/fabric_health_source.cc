#include "site_agent/fabric_health_source.h"

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "config/config_reader.h"
#include "daemon/log.h"
#include "site_agent/agent_config.h"
#include "site_agent/local_http.h"

namespace geodesic::site_agent {
namespace {

constexpr std::chrono::milliseconds kHttpTimeout{500};

bool SameHealth(v1::FabricPlaneHealth a, v1::FabricPlaneHealth b) {
  a.clear_measured_at_unix_ms();
  b.clear_measured_at_unix_ms();
  return a.SerializeAsString() == b.SerializeAsString();
}

}  // namespace

absl::StatusOr<std::vector<v1::FabricPlaneHealth>> ParsePlaneHealth(const std::string& text,
                                                                    const std::string& origin,
                                                                    const FabricShape& shape) {
  auto reader = config::ConfigReader::FromString(text, origin);
  if (!reader.ok()) return reader.status();
  std::vector<v1::FabricPlaneHealth> planes;
  std::set<uint32_t> seen;
  for (auto& entry : reader->RequiredMapList("planes")) {
    v1::FabricPlaneHealth health;
    health.set_plane(static_cast<uint32_t>(entry.RequiredUint("plane", 0, shape.planes - 1)));
    const std::string state_text = entry.RequiredString("state");
    if (auto state = ParseOperState(state_text)) {
      health.set_state(*state);
    } else if (!state_text.empty()) {
      entry.AddError("state", absl::StrCat("expected up, degraded or down, got \"", state_text, "\""));
    }
    std::set<uint32_t> rails;
    for (const std::string& rail_text : entry.OptionalStringList("failed_rails")) {
      uint32_t rail = 0;
      if (!absl::SimpleAtoi(rail_text, &rail) || rail >= shape.rails) {
        entry.AddError("failed_rails", absl::StrCat("\"", rail_text, "\" is not a rail from 0 to ", shape.rails - 1));
      } else if (!rails.insert(rail).second) {
        entry.AddError("failed_rails", absl::StrCat("rail ", rail, " is listed twice"));
      } else {
        health.add_failed_rails(rail);
      }
    }
    entry.RejectUnknownKeys();
    if (!seen.insert(health.plane()).second) entry.AddError("plane", absl::StrCat("plane ", health.plane(), " is listed twice"));
    planes.push_back(std::move(health));
  }
  reader->RejectUnknownKeys();
  if (absl::Status status = reader->status(); !status.ok()) return status;
  return planes;
}

absl::StatusOr<FabricHealthSource> FabricHealthSource::Create(std::string source, FabricShape shape) {
  if (shape.planes == 0 || shape.rails == 0) {
    return absl::InvalidArgumentError("a fabric has at least one plane and one rail");
  }
  const bool is_url = absl::StartsWith(source, "http:") || absl::StartsWith(source, "https:");
  if (is_url) {
    if (absl::StatusOr<LocalUrl> url = ParseLocalUrl(source); !url.ok()) return url.status();
  } else if (source.empty()) {
    return absl::InvalidArgumentError("the fabric health source is empty");
  }
  return FabricHealthSource(std::move(source), is_url, shape);
}

absl::StatusOr<std::string> FabricHealthSource::Read() const {
  if (is_url_) return HttpGetLocal(*ParseLocalUrl(source_), kHttpTimeout);
  std::ifstream in(source_);
  if (!in) return absl::NotFoundError(absl::StrCat(source_, ": cannot open the file"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<v1::FabricPlaneHealth> FabricHealthSource::Poll(int64_t now_unix_ms) {
  absl::StatusOr<std::string> text = Read();
  if (!text.ok()) {
    // A fabric manager that is away says nothing new: keep what it said last.
    if (status_.ok()) daemon::LogWarn("fabric health source unreadable", {{"error", std::string(text.status().message())}});
    status_ = text.status();
    return {};
  }
  if (read_once_ && *text == last_text_) {
    status_ = parse_status_;
    return {};
  }
  last_text_ = *text;
  read_once_ = true;
  absl::StatusOr<std::vector<v1::FabricPlaneHealth>> planes = ParsePlaneHealth(*text, source_, shape_);
  parse_status_ = planes.status();
  status_ = parse_status_;
  if (!planes.ok()) {
    daemon::LogError("fabric health ignored", {{"error", std::string(status_.message())}});
    return {};
  }
  std::vector<v1::FabricPlaneHealth> changed;
  for (v1::FabricPlaneHealth& health : *planes) {
    auto it = current_.find(health.plane());
    if (it != current_.end() && SameHealth(it->second, health)) continue;
    health.set_measured_at_unix_ms(now_unix_ms);
    current_[health.plane()] = health;
    changed.push_back(std::move(health));
  }
  return changed;
}

std::vector<v1::FabricPlaneHealth> FabricHealthSource::Current() const {
  std::vector<v1::FabricPlaneHealth> planes;
  for (const auto& [plane, health] : current_) planes.push_back(health);
  return planes;
}

}  // namespace geodesic::site_agent
