#pragma once
// A fresh directory for the benchmarks of bench/ to put a DB in, under $TMPDIR
// (else /tmp), removed with its contents when the object goes away. Exits the
// process when the directory cannot be made: a benchmark has nothing to report then.
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace geodesic::bench {

class ScratchDir {
 public:
  // `prefix` names the directory ("<prefix>_XXXXXX"), for whoever finds it left over.
  explicit ScratchDir(const std::string& prefix) {
    const char* tmp = getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/" + prefix + "_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      perror(("mkdtemp " + pattern).c_str());
      exit(1);
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Where the DB goes: a path inside the directory that does not exist yet.
  std::string db() const { return path_ + "/db"; }
  // The directory itself.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace geodesic::bench
