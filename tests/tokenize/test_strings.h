#pragma once

#include <string>
#include <vector>

namespace stagegate::tokenize {

/// The texts the tokenizers are compared on: a fixed list of hard cases (scripts, emoji with
/// joiners and flags, code, whitespace runs, numbers, contractions) and a few thousand seeded
/// mixtures of them. The same every run; all valid UTF-8 in NFC; none contains the text of an
/// added token ("<|...|>", "<s>").
std::vector<std::string> TokenizerTestStrings();

}  // namespace stagegate::tokenize
