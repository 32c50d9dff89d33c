#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace stagegate::fuzz {

/// The input as text, bytes unchanged.
inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// A folder of this process's own under $TMPDIR (or /tmp), made on first use and removed when the
/// process exits normally; a crashed run leaves it behind. For the loaders that read files.
const std::string& ScratchDir();

/// Writes `bytes` to ScratchDir()/`name` (folders made as needed), replacing what was there, and
/// returns the path. Aborts when the file cannot be written: a fuzzer without its input is broken.
std::string WriteScratchFile(const std::string& name, std::string_view bytes);

/// Removes ScratchDir()/`name` and all inside it, if it is there.
void RemoveScratch(const std::string& name);

/// Stops the fuzzer with `what` on stderr: a property that must hold does not.
[[noreturn]] void Fail(const std::string& what);

}  // namespace stagegate::fuzz
