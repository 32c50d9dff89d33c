#include "fuzz_support.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace stagegate::fuzz {
namespace {

namespace fs = std::filesystem;

// Owns the scratch folder; its destructor runs at normal exit.
struct Scratch {
  std::string path;

  Scratch() {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/stagegate-fuzz-XXXXXX";
    if (!mkdtemp(pattern.data())) Fail("cannot make a scratch folder from " + pattern);
    path = pattern;
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

}  // namespace

const std::string& ScratchDir() {
  static const Scratch scratch;
  return scratch.path;
}

std::string WriteScratchFile(const std::string& name, std::string_view bytes) {
  const fs::path path = fs::path(ScratchDir()) / name;
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (error || !out) Fail("cannot write " + path.string());
  return path.string();
}

void RemoveScratch(const std::string& name) {
  std::error_code ignored;
  fs::remove_all(fs::path(ScratchDir()) / name, ignored);
}

void Fail(const std::string& what) {
  fprintf(stderr, "fuzz property failed: %s\n", what.c_str());
  fflush(stderr);
  abort();
}

}  // namespace stagegate::fuzz
