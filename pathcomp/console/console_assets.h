#pragma once
// The console's page and its script and style sheet (assets/), built into
// the binary (cmake/embed_assets.cmake): pathcomp serves them with no file
// next to it, and the page asks for nothing from anywhere else.
#include <string_view>
#include <vector>

namespace geodesic::pathcomp {

struct EmbeddedAsset {
  std::string_view path;  // "/" for index.html, else "/<file name>"
  std::string_view content_type;
  std::string_view body;
};

// Every asset, in the order of pathcomp/console/CMakeLists.txt.
const std::vector<EmbeddedAsset>& ConsoleAssets();

}  // namespace geodesic::pathcomp
