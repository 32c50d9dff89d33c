#pragma once

#include <string>
#include <vector>

namespace stagegate::tokenize {

/// The texts the tokenizers are compared on: a fixed list of hard cases (scripts, emoji with
/// joiners and flags, code, whitespace runs, numbers, contractions), 3,000 seeded mixtures of
/// them, and 1,500 seeded strings of random characters from many Unicode blocks (some not in
/// NFC). The same every run; all valid UTF-8; none contains the text of an added token
/// ("<|...|>", "<s>").
std::vector<std::string> TokenizerTestStrings();

}  // namespace stagegate::tokenize
