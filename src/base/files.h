#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace stagegate {

/// The largest file ReadFile reads unless told otherwise.
inline constexpr size_t kMaxInputFileBytes = size_t{256} << 20;

/// Reads a whole regular file of at most `max_bytes`. NotFound when it does not exist; IoError
/// when it cannot be read or is not a regular file (a directory, a device such as /dev/zero, a
/// FIFO that would block, a symlink loop); InvalidInput when it is larger than `max_bytes`.
Result<std::string> ReadFile(const std::string& path, size_t max_bytes = kMaxInputFileBytes);

/// Why ReadFile(path) failed, without the path its messages start with: for a caller that
/// shows the path already ("scenario.yaml: not a regular file ...").
std::string ReadFailure(const Status& status, const std::string& path);

/// "16 MiB", "512 KiB", "300 bytes": a size limit as messages show it.
std::string DescribeBytes(size_t bytes);

/// Writes `contents` to `path` through a temporary file and a rename, so a reader never sees a
/// half-written file.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

/// Makes the folder `dir` (and its parents) if needed and proves that a file can be made in it,
/// leaving nothing behind but the folder. IoError naming `dir` and the system's reason otherwise.
/// Called before a long piece of work whose results go there, so that a bad path is found first.
Status CheckWritableDirectory(const std::string& dir);

bool IsDirectory(const std::string& path);
bool IsRegularFile(const std::string& path);

/// The regular files directly inside `dir` whose names end in `suffix`, sorted by name, as
/// `dir/name` paths.
Result<std::vector<std::string>> ListFiles(const std::string& dir, const std::string& suffix);

/// `relative` as written in `from_file`, resolved against that file's folder and normalised
/// lexically ("a/b/../c" -> "a/c"). An absolute `relative` is returned normalised.
std::string ResolveRelativeTo(const std::string& from_file, const std::string& relative);

}  // namespace stagegate
