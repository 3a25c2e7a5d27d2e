#pragma once
// The health of the facility's DC fabric planes, as its fabric manager
// publishes it: a file it writes, or a local HTTP endpoint it serves (drills
// write the file). Either holds YAML or JSON:
//
//   planes:
//     - {plane: 0, state: up}
//     - {plane: 3, state: degraded, failed_rails: [1, 6]}
//     - {plane: 5, state: down}
//
// Planes not listed keep their last reported health (none reported: up).
// A document that does not parse or does not fit the configured fabric
// (plane or rail out of range, a plane twice) is ignored as a whole and
// logged: bad input changes nothing. Thread-compatible.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "geodesic/v1/model.pb.h"

namespace geodesic::site_agent {

struct FabricShape {
  uint32_t planes = 0;
  uint32_t rails = 0;  // per plane
};

// Parses and validates one document; errors name `origin` and the line.
[[nodiscard]] absl::StatusOr<std::vector<v1::FabricPlaneHealth>> ParsePlaneHealth(const std::string& text,
                                                                                  const std::string& origin,
                                                                                  const FabricShape& shape);

class FabricHealthSource {
 public:
  // `source`: a file path, or http://127.0.0.1:PORT/PATH (also localhost or
  // [::1]: the fabric manager runs beside the agent). InvalidArgument for
  // any other URL or an empty fabric shape.
  [[nodiscard]] static absl::StatusOr<FabricHealthSource> Create(std::string source, FabricShape shape);

  // Reads the source; returns the planes whose health changed since the
  // last good read, stamped `now_unix_ms`.
  std::vector<v1::FabricPlaneHealth> Poll(int64_t now_unix_ms);
  // Every plane reported so far.
  std::vector<v1::FabricPlaneHealth> Current() const;
  // The last problem reading or parsing the source (for logs and tests).
  const absl::Status& status() const { return status_; }

 private:
  FabricHealthSource(std::string source, bool is_url, FabricShape shape)
      : source_(std::move(source)), is_url_(is_url), shape_(shape) {}
  absl::StatusOr<std::string> Read() const;

  std::string source_;
  bool is_url_ = false;
  FabricShape shape_;
  std::string last_text_;
  bool read_once_ = false;
  std::map<uint32_t, v1::FabricPlaneHealth> current_;
  absl::Status parse_status_;  // of last_text_
  absl::Status status_;
};

}  // namespace geodesic::site_agent
