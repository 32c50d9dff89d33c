#include "sim/default_corpus.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "base/files.h"
#include "base/strings.h"

namespace stagegate::sim {

namespace fs = std::filesystem;

std::vector<std::string> DefaultCorpusCandidates() {
  std::vector<fs::path> folders;
  std::error_code error;
  if (fs::path here = fs::current_path(error); !error) folders.push_back(here);
  if (fs::path executable = fs::read_symlink("/proc/self/exe", error); !error)
    folders.push_back(executable.parent_path() / "..");
  std::vector<std::string> candidates;
  for (const fs::path& folder : folders) {
    std::string candidate = (folder / kDefaultCorpus).lexically_normal().string();
    if (std::find(candidates.begin(), candidates.end(), candidate) == candidates.end())
      candidates.push_back(std::move(candidate));
  }
  return candidates;
}

Result<std::string> FindDefaultCorpus() {
  const std::vector<std::string> candidates = DefaultCorpusCandidates();
  for (const std::string& candidate : candidates) {
    if (IsRegularFile(candidate + "/corpus.yaml")) return candidate;
  }
  return Status::NotFound("no corpus found at " + Join(candidates, " or ") +
                          ": pass --corpus DIR (the folder with corpus.yaml)");
}

}  // namespace stagegate::sim
