#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace stagegate::review {

/// The page a reviewer scores a packet in: one self-contained HTML5 file (inline CSS and script,
/// a Content-Security-Policy that forbids every fetch) that works offline from a file:// URL.
///
/// `packet` is a stagegate-packet (format and version 1 as written by ExportForReview). It is
/// embedded verbatim as JSON in <script type="application/json" id="packet">, with <, >, &, ',
/// U+2028 and U+2029 written as \u escapes so that no text in it can end the element; invalid
/// UTF-8 is replaced by U+FFFD. The page's script puts packet text into the document as text only,
/// never as markup. Never throws on the packet's content: a packet the page cannot use (missing
/// fields, duplicate ids, bad levels) yields a page that lists what is wrong.
///
/// The page keeps scores and seconds per item in localStorage (key "stagegate-review/" + export_id
/// + "/" + reviewer) and downloads them as scores-<reviewer>-<export_id>.jsonl: a header line
/// {"format":"stagegate-scores","version":1,"export_id":..,"reviewer":..}, then one line per item
/// with every criterion scored, in packet order: {"item":..,"scores":{..},"seconds":..}.
std::string ReviewerPageHtml(const nlohmann::json& packet);

/// `value` as JSON text that is safe inside an HTML <script> element: as dump() without
/// indentation, with the escapes described above. JSON.parse and nlohmann::json::parse read it
/// back to `value` (less any invalid UTF-8).
std::string ScriptSafeJson(const nlohmann::json& value);

}  // namespace stagegate::review
