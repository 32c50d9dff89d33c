#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace stagegate {

/// Reads a whole file. NotFound when it does not exist, IoError when it cannot be read.
Result<std::string> ReadFile(const std::string& path);

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
