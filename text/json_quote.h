#pragma once
// Text as a JSON string literal, for the few places that write JSON by hand
// (tectl's YAML-to-JSON output, the console's small answers); protobuf
// messages go through protobuf's own JSON printer.
#include <string>
#include <string_view>

namespace geodesic::text {

// `text` quoted, with ", \ and control characters escaped (\n, \r, \t,
// else \u00XX); other bytes, UTF-8 included, as they are.
std::string JsonQuote(std::string_view text);

}  // namespace geodesic::text
