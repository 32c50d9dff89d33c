#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace stagegate::testing {

inline std::string Testdata(const std::string& relative) {
  return std::string(STAGEGATE_TESTDATA) + "/" + relative;
}

inline std::string SourcePath(const std::string& relative) {
  return std::string(STAGEGATE_SOURCE_DIR) + "/" + relative;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// A fresh folder under the system's temporary folder, removed with everything in it on scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device seed;
    path_ = (std::filesystem::temp_directory_path() /
             ("stagegate-test-" + std::to_string(seed()) + std::to_string(seed())))
                .string();
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace stagegate::testing
