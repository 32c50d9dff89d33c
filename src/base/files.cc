#include "base/files.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace stagegate {

namespace fs = std::filesystem;

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!fs::exists(path)) return Status::NotFound(path + ": no such file");
    return Status::IoError(path + ": " + std::strerror(errno));
  }
  if (fs::is_directory(path)) return Status::IoError(path + ": is a directory");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Status::IoError(path + ": read failed");
  return buffer.str();
}

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IoError(temporary + ": " + std::strerror(errno));
    out << contents;
    out.flush();
    if (!out) return Status::IoError(temporary + ": write failed");
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) return Status::IoError(path + ": " + error.message());
  return Status::Ok();
}

Status CheckWritableDirectory(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return Status::IoError(dir + ": cannot make the folder: " + error.message());
  if (!fs::is_directory(dir, error)) return Status::IoError(dir + ": not a folder");
  std::string probe = dir + "/.stagegate-write-check-XXXXXX";
  const int fd = mkstemp(probe.data());
  if (fd < 0) return Status::IoError(dir + ": cannot write there: " + std::strerror(errno));
  close(fd);
  unlink(probe.c_str());
  return Status::Ok();
}

bool IsDirectory(const std::string& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

bool IsRegularFile(const std::string& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

Result<std::vector<std::string>> ListFiles(const std::string& dir, const std::string& suffix) {
  std::error_code error;
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (!it->is_regular_file()) continue;
    std::string name = it->path().filename().string();
    if (name.size() >= suffix.size() && name.ends_with(suffix)) names.push_back(name);
  }
  if (error) return Status::IoError(dir + ": " + error.message());
  std::sort(names.begin(), names.end());
  std::vector<std::string> paths;
  for (const std::string& name : names)
    paths.push_back((fs::path(dir) / name).string());
  return paths;
}

std::string ResolveRelativeTo(const std::string& from_file, const std::string& relative) {
  fs::path target(relative);
  if (target.is_relative()) target = fs::path(from_file).parent_path() / target;
  std::string normal = target.lexically_normal().string();
  if (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal.empty() ? "." : normal;
}

}  // namespace stagegate
