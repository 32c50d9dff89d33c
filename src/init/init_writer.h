#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace stagegate::init {

/// Files to write, as (path relative to the folder, text).
using InitFileList = std::vector<std::pair<std::string, std::string>>;

/// Writes `files` into `dir` all or nothing, so that a failed `init` leaves nothing a second one
/// would refuse to overwrite:
///  1. makes `dir` (and its missing parents), then a hidden staging folder in it
///     (`.stagegate-init-XXXXXX`), and writes every file there;
///  2. calls `check` with the staging folder, where the files can be read as they will be;
///  3. moves each file into place (same file system: a rename), making the folders it needs and
///     never replacing a file that exists.
/// On any failure, in any step, it removes every file it moved and every folder it made (never
/// one that was there before), and the staging folder, and returns the error, its message ending
/// in what, if anything, could not be removed. Any Status `check` returns but Ok is a failure.
Status WriteAllOrNothing(const std::string& dir, const InitFileList& files,
                         const std::function<Status(const std::string& staged)>& check);

}  // namespace stagegate::init
