#pragma once
// Replaces a file so that a crash or power loss leaves either the old contents
// or the new ones at `path`, never an empty or partly written file.
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace geodesic::files {

// Writes `contents` to a new temporary file in `path`'s directory, fsyncs it,
// renames it over `path` and fsyncs the directory, so the new name survives a
// power loss too. When OK returns, `path` holds `contents` durably.
//
// On error the status names `path` and the step that failed (Unavailable, or
// PermissionDenied / NotFound when the directory forbids or lacks it;
// InvalidArgument for a path that names no file). Up to the rename, `path` is
// untouched (the old file, or none) and the temporary file is removed; when
// only the directory's fsync fails, `path` holds `contents` but the rename
// may not survive a power loss.
// A temporary file left by an earlier crash never replaces `path`: every call
// writes its own, uniquely named one.
//
// Thread-safe: concurrent calls for the same path each install a whole file;
// the last rename wins.
[[nodiscard]] absl::Status AtomicWriteFile(const std::string& path, std::string_view contents);

}  // namespace geodesic::files
