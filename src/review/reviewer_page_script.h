#pragma once

#include <string_view>

namespace stagegate::review {

/// The reviewer page's script (ReviewerPageHtml): it reads the packet from the page, shows one
/// item at a time, keeps scores, time and usability judgements in localStorage, and downloads
/// the scores file. Packet text reaches the document only through textContent, dataset and
/// setAttribute on attributes that are not URLs or handlers.
extern const std::string_view kReviewerPageScript;

}  // namespace stagegate::review
