#pragma once

#include <array>
#include <string_view>

namespace stagegate {

/// 64 common English words (6 random bits pick one), none longer than 10 bytes: the filler of the
/// reference application's long answers and the text of synthetic prompts.
inline constexpr std::array<std::string_view, 64> kCommonWords = {
    "the",   "of",     "and",   "to",      "in",    "is",     "that",    "for",
    "it",    "as",     "with",  "on",      "this",  "by",     "from",    "at",
    "which", "be",     "or",    "are",     "an",    "was",    "have",    "not",
    "can",   "more",   "also",  "time",    "work",  "team",   "each",    "other",
    "first", "new",    "about", "when",    "would", "there",  "their",   "will",
    "make",  "like",   "just",  "over",    "such",  "only",   "some",    "could",
    "into",  "year",   "your",  "good",    "most",  "these",  "people",  "system",
    "may",   "should", "well",  "process", "data",  "policy", "request", "service",
};

}  // namespace stagegate
