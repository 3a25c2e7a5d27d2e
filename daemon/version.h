#pragma once
// The version of this build, as --version prints it: the project version and,
// when built from a git checkout, its `git describe` at configure time
// ("0.1.0 (git b433bc6)"). cmake/version.cmake sets it.
#include <string_view>

namespace geodesic::daemon {

std::string_view Version();

}  // namespace geodesic::daemon
