#include "base/files.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace stagegate {

namespace fs = std::filesystem;

std::string ReadFailure(const Status& status, const std::string& path) {
  const std::string& message = status.message();
  const std::string prefix = path + ": ";
  return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
}

std::string DescribeBytes(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

Result<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  // The type first, without opening: opening a FIFO blocks, and a device never ends.
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (status.type() == fs::file_type::not_found) return Status::NotFound(path + ": no such file");
  if (error) return Status::IoError(path + ": " + error.message());
  if (status.type() == fs::file_type::directory) return Status::IoError(path + ": is a directory");
  if (status.type() != fs::file_type::regular)
    return Status::IoError(path + ": not a regular file (a device, FIFO or socket)");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": " + std::strerror(errno));
  std::string contents;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    contents.append(chunk, static_cast<size_t>(in.gcount()));
    if (contents.size() > max_bytes)
      return Status::InvalidInput(path + ": larger than " + DescribeBytes(max_bytes) +
                                  ", the most stagegate reads from such a file");
  }
  if (in.bad()) return Status::IoError(path + ": read failed");
  return contents;
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
