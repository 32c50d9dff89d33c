#pragma once

#include <string>
#include <string_view>

namespace stagegate::tokenize {

/// `text` in Unicode Normalization Form C (ICU's), as a tokenizer.json "NFC" normalizer has it.
/// Ill-formed UTF-8 is kept byte for byte; the well-formed stretches around it are normalized
/// each on its own.
std::string ToNfc(std::string_view text);

}  // namespace stagegate::tokenize
