#include "init/init_writer.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/files.h"
#include "base/strings.h"

namespace stagegate::init {
namespace {

namespace fs = std::filesystem;

// What a write made, so that a failure can take it away again.
struct Made {
  std::vector<fs::path> folders;  // in the order made
  std::vector<fs::path> files;    // moved into place
  fs::path staging;               // empty: none

  // Removes it all, newest first; returns the paths that could not be removed.
  std::vector<std::string> Undo() {
    std::vector<std::string> left;
    std::error_code error;
    for (auto file = files.rbegin(); file != files.rend(); ++file)
      if (!fs::remove(*file, error) && error) left.push_back(file->string());
    if (!staging.empty() && fs::remove_all(staging, error) == static_cast<std::uintmax_t>(-1))
      left.push_back(staging.string());
    for (auto folder = folders.rbegin(); folder != folders.rend(); ++folder)
      if (!fs::remove(*folder, error) && error) left.push_back(folder->string());
    return left;
  }
};

// Makes `folder` and each missing parent, recording what it made.
Status MakeFolders(const fs::path& folder, Made& made) {
  fs::path at;
  for (const fs::path& part : folder) {
    at /= part;
    std::error_code error;
    const fs::file_status status = fs::status(at, error);
    if (fs::is_directory(status)) continue;
    if (fs::exists(status))
      return Status::IoError("cannot make the folder " + at.string() +
                             ": a file that is not a folder is in the way");
    if (!fs::create_directory(at, error) && error)
      return Status::IoError("cannot make the folder " + at.string() + ": " + error.message());
    made.folders.push_back(at);
  }
  return Status::Ok();
}

Status Stage(const fs::path& dir, const InitFileList& files, Made& made) {
  SG_RETURN_IF_ERROR(MakeFolders(dir, made));
  std::string name = (dir / ".stagegate-init-XXXXXX").string();
  if (!mkdtemp(name.data()))
    return Status::IoError("cannot write into " + dir.string() + ": " + std::strerror(errno));
  made.staging = name;
  for (const auto& [relative, text] : files) {
    const fs::path path = made.staging / relative;
    std::error_code error;
    fs::create_directories(path.parent_path(), error);
    if (error)
      return Status::IoError("cannot make the folder " + path.parent_path().string() + ": " +
                             error.message());
    SG_RETURN_IF_ERROR(WriteFileAtomically(path.string(), text));
  }
  return Status::Ok();
}

Status MoveIntoPlace(const fs::path& dir, const InitFileList& files, Made& made) {
  for (const auto& [relative, text] : files) {
    const fs::path path = dir / relative;
    SG_RETURN_IF_ERROR(MakeFolders(path.parent_path(), made));
    std::error_code error;
    if (fs::exists(fs::symlink_status(path, error)))
      return Status::IoError(path.string() +
                             " appeared while init ran; init never overwrites "
                             "a file");
    fs::rename(made.staging / relative, path, error);
    if (error)
      return Status::IoError("cannot move " + path.string() + " into place: " + error.message());
    made.files.push_back(path);
  }
  return Status::Ok();
}

// `status` with `more` after its message, its code kept.
Status Followed(const Status& status, const std::string& more) {
  const std::string message = status.message() + more;
  switch (status.code()) {
    case Status::Code::kInvalidInput:
      return Status::InvalidInput(message);
    case Status::Code::kInternal:
      return Status::Internal(message);
    default:
      return Status::IoError(message);
  }
}

}  // namespace

Status WriteAllOrNothing(const std::string& dir, const InitFileList& files,
                         const std::function<Status(const std::string& staged)>& check) {
  const fs::path folder = fs::path(dir).lexically_normal();
  Made made;
  Status status = Stage(folder, files, made);
  if (status.ok()) status = check(made.staging.string());
  if (status.ok()) status = MoveIntoPlace(folder, files, made);
  if (status.ok()) {
    made.files.clear();
    made.folders.clear();  // they hold the files now
  }
  const std::vector<std::string> left = made.Undo();
  if (!status.ok())
    return Followed(status, left.empty()
                                ? "\nnothing was left behind: init can run again once "
                                  "that is fixed"
                                : "\ncould not remove (remove by hand): " + Join(left, ", "));
  // Written, but the staging folder could not be removed: say so, the files stand.
  if (!left.empty())
    return Status::IoError("the files are written, but the staging folder " + Join(left, ", ") +
                           " could not be removed");
  return Status::Ok();
}

}  // namespace stagegate::init
