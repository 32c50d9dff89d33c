#include "tokenize/test_strings.h"

#include <random>

namespace stagegate::tokenize {
namespace {

const char* const kSeeds[] = {
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "don't",
    "I'M",
    "we'll they've she'd it's YOU'RE I'd",
    "'s 't 're 've 'm 'll 'd",
    "rock'n'roll",
    "O'Neil's",
    "\"quoted\" and 'single'",
    "12345678901234567890",
    "3.14159",
    "1,000,000",
    "-42",
    "0x1F",
    "2026-12-01T23:59:59Z",
    "v1.2.3",
    "$19.99",
    "50%",
    "1e-9",
    "٣٤٥",
    "१२३",
    "你好，世界！",
    "我们今天去公园散步吧。",
    "東京は日本の首都です。",
    "カタカナとひらがな",
    "مرحبا بالعالم",
    "السلام عليكم ورحمة الله",
    "नमस्ते दुनिया",
    "हिन्दी में लिखा गया वाक्य।",
    "Привет, мир!",
    "Съешь же ещё этих мягких французских булок.",
    "Ελληνικά γράμματα",
    "한국어 문장입니다",
    "ภาษาไทย",
    "עברית",
    "café naïve façade résumé",
    "Ærøskøbing Ørsted",
    "Straße",
    "ÀÉÎÕÜ àéîõü",
    "ñandú",
    "Łódź żółć",
    "😀",
    "👍🏽",
    "👨‍👩‍👧‍👦",
    "🧑🏻‍💻",
    "🏳️‍🌈",
    "🇫🇷🇯🇵🇺🇸",
    "❤️‍🔥",
    "✨🎉🚀",
    "©®™",
    "int main() {\n\treturn 0;\n}\n",
    "def f(x):\n    return x ** 2\n",
    "for (int i = 0; i < n; ++i) {\n\t\tsum += a[i];\n\t}",
    "if a != b && c >= d || !e:",
    "std::vector<int32_t> ids;",
    "SELECT * FROM t WHERE id = 42;",
    "<div class=\"x\">y</div>",
    "{\"key\": [1, 2, 3], \"nested\": {\"a\": null}}",
    "path/to/file.txt",
    "https://example.com/a?b=c&d=e",
    "user@example.com",
    "#!/bin/bash\necho \"$HOME\"",
    "a\\b\\c",
    "~!@#$%^&*()_+`-=[]{}|;:,./<>?",
    "\n",
    "\n\n",
    "\n\n\n",
    "   ",
    " ",
    "\t",
    "\t \n",
    "\r\n",
    "\r\n\r\n",
    "  \n  \n",
    "\t\t\t",
    "word   word",
    "trailing space ",
    " leading space",
    "  two leading",
    "x\n\n\ny",
    "\u00a0non-breaking\u00a0space",
    "ideographic\u3000space",
    "em\u2003space",
    "a\u200bb",
    "...",
    "!!!",
    "???",
    "—",
    "–",
    "…",
    "«guillemets»",
    "„Anführungszeichen“",
    "¿Qué?",
    "¡Hola!",
    "MixedCASE camelCase snake_case kebab-case SCREAMING_CASE",
    "ALLCAPS SENTENCE WITH NUMBERS 123 AND SYMBOLS!",
    "a",
    "ab",
    "abc",
    "A",
    "Ab",
    "The year 1999 and 2000 and 31337.",
    "Numbers: 1 22 333 4444 55555 666666",
    "Tab\tseparated\tvalues",
    "line one\nline two\nline three",
    "trailing newline\n",
};

const char* const kJoiners[] = {" ", "", "\n", "  ", "\t", ", ", "\n\n", " - ", "'", "\r\n"};

// Blocks random characters are drawn from: controls and whitespace, Latin, Greek and Cyrillic
// with their combining marks, Hebrew, Arabic, Devanagari, Thai, Hangul jamo and syllables, CJK,
// kana, punctuation and symbols, variation selectors, full-width forms, emoji, Linear B and
// mathematical letters. U+0085 and U+FEFF are left out: see docs/tokenizers.md.
constexpr char32_t kBlocks[][2] = {
    {0x20, 0x7E},       {0x09, 0x0D},     {0xA0, 0x24F},    {0x300, 0x36F},     {0x370, 0x52F},
    {0x590, 0x6FF},     {0x900, 0x97F},   {0xE00, 0xE7F},   {0x1100, 0x11FF},   {0x1680, 0x1680},
    {0x180E, 0x180E},   {0x2000, 0x206F}, {0x2070, 0x2BFF}, {0x3000, 0x30FF},   {0x4E00, 0x4FFF},
    {0xAC00, 0xAD00},   {0xFE00, 0xFE0F}, {0xFF00, 0xFFEF}, {0x1F300, 0x1FAFF}, {0x10000, 0x1007F},
    {0x1D400, 0x1D7FF},
};

void AppendUtf8(char32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

}  // namespace

std::vector<std::string> TokenizerTestStrings() {
  std::vector<std::string> strings(std::begin(kSeeds), std::end(kSeeds));
  const size_t seeds = strings.size();
  std::mt19937 random(20261201);
  const auto pick = [&](size_t n) {
    return static_cast<size_t>(std::uniform_int_distribution<size_t>(0, n - 1)(random));
  };
  const size_t joiners = std::size(kJoiners);
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    const size_t parts = 2 + pick(5);
    for (size_t p = 0; p < parts; ++p) {
      if (p > 0) text += kJoiners[pick(joiners)];
      text += strings[pick(seeds)];
    }
    // Some repeat a piece, for long runs of one kind.
    if (pick(10) == 0) {
      const std::string piece = strings[pick(seeds)];
      for (size_t r = 0; r < 2 + pick(20); ++r)
        text += piece;
    }
    strings.push_back(std::move(text));
  }
  // Random characters, not all in NFC (a combining mark after a letter often is not).
  for (int i = 0; i < 1500; ++i) {
    std::string text;
    const size_t length = 1 + pick(40);
    for (size_t k = 0; k < length; ++k) {
      const auto& block = kBlocks[pick(std::size(kBlocks))];
      AppendUtf8(block[0] + static_cast<char32_t>(pick(block[1] - block[0] + 1)), text);
    }
    strings.push_back(std::move(text));
  }
  return strings;
}

}  // namespace stagegate::tokenize
