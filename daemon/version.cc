#include "daemon/version.h"

#ifndef GEODESIC_VERSION
#error "GEODESIC_VERSION is set by daemon/CMakeLists.txt"
#endif

namespace geodesic::daemon {

std::string_view Version() { return GEODESIC_VERSION; }

}  // namespace geodesic::daemon
