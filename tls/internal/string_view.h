// Private to tls/: conversions between std::string_view and absl::string_view.
// Debian 12's Abseil is built with ABSL_OPTION_USE_STD_STRING_VIEW=0, so the
// two are distinct types; the public API of tls/ uses std::string_view.
#ifndef GEODESIC_TLS_INTERNAL_STRING_VIEW_H_
#define GEODESIC_TLS_INTERNAL_STRING_VIEW_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace geodesic::tls::internal {

inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

inline std::string_view ToStd(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

}  // namespace geodesic::tls::internal

#endif  // GEODESIC_TLS_INTERNAL_STRING_VIEW_H_
