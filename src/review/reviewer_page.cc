#include "review/reviewer_page.h"

#include <string_view>

#include <nlohmann/json.hpp>

#include "review/reviewer_page_script.h"

namespace stagegate::review {
namespace {

// The page up to the packet. Static text only: everything from the packet is put in by the script
// (reviewer_page_script.cc), as text. The policy forbids every fetch, so a page that somehow gained
// markup could still load nothing; the empty data: icon keeps the browser from asking for
// /favicon.ico.
constexpr std::string_view kPageHead = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<link rel="icon" href="data:,">
<title>Review</title>
<style>
:root {
  --bg: #f5f5f2; --card: #fff; --text: #1d2125; --muted: #5a6068; --line: #d6d8db;
  --accent: #1f5fbf; --on-accent: #fff; --warn-bg: #fff3d1; --warn-line: #d9a93a;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #16181b; --card: #202327; --text: #e5e5e2; --muted: #a2a8af; --line: #3b4046;
    --accent: #79aaf7; --on-accent: #0c1a30; --warn-bg: #3a3020; --warn-line: #8c6e2b;
  }
}
* { box-sizing: border-box; }
/* What is scrolled into view stays above the fixed bar; --bar is the bar's height, kept by the script. */
html { scroll-padding-bottom: calc(var(--bar, 3.5rem) + 1.5rem); }
body {
  margin: 0; background: var(--bg); color: var(--text);
  font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
.page { max-width: 52rem; margin: 0 auto; padding: .75rem 1rem calc(var(--bar, 3.5rem) + 3.5rem); }
.top { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem 1rem; }
h1 { font-size: 1.2rem; margin: 0; }
h2 { font-size: .75rem; font-weight: 600; text-transform: uppercase; letter-spacing: .07em; color: var(--muted); margin: 0 0 .4rem; }
.position { color: var(--muted); font-variant-numeric: tabular-nums; }
.legend { color: var(--muted); font-size: .85rem; margin: .5rem 0; }
/* In the fixed bar: a notice that comes while the reviewer scores moves nothing they might click. */
.notice {
  width: min(50rem, calc(100% - 1.2rem)); margin: .55rem auto 0; background: var(--warn-bg); border: 1px solid var(--warn-line);
  border-radius: 6px; padding: .4rem .75rem; font-size: .9rem;
}
.help { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .5rem .9rem; margin: .75rem 0; }
.help summary { cursor: pointer; font-weight: 600; }
.help p { margin: .5rem 0 .25rem; }
kbd {
  font: .8em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; border: 1px solid var(--line);
  border-bottom-width: 2px; border-radius: 4px; padding: 0 .3em; background: var(--card); color: var(--text);
}
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; margin: .75rem 0; }
.answer { border-left: 4px solid var(--accent); }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
.turn + .turn { margin-top: .7rem; padding-top: .7rem; border-top: 1px dashed var(--line); }
.role { font-size: .75rem; font-weight: 600; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); }
.criterion {
  background: var(--card); border: 1px solid var(--line); border-left: 4px solid var(--line);
  border-radius: 8px; padding: .7rem .9rem; margin: .75rem 0; scroll-margin: 1rem 0 6rem;
}
.criterion.current { border-color: var(--accent); box-shadow: 0 0 0 1px var(--accent); }
.question { font-weight: 600; margin: 0 0 .5rem; overflow-wrap: anywhere; }
.tag {
  font-size: .7rem; text-transform: uppercase; letter-spacing: .05em; border: 1px solid var(--muted);
  border-radius: 999px; padding: 0 .5em; margin-left: .4em; color: var(--muted); vertical-align: middle;
}
.levels { display: grid; gap: .35rem; }
button { font: inherit; color: inherit; }
.level {
  display: flex; gap: .6rem; align-items: flex-start; width: 100%; text-align: left; cursor: pointer;
  background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .4rem .6rem;
}
.level:hover { border-color: var(--accent); }
.level[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: var(--on-accent); }
.level-num { flex: none; min-width: 1.5rem; font-weight: 700; text-align: center; font-variant-numeric: tabular-nums; }
.anchor { flex: 1; white-space: pre-wrap; overflow-wrap: anywhere; }
button:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.bar { position: fixed; left: 0; right: 0; bottom: 0; background: var(--card); border-top: 1px solid var(--line); }
.bar-inner { max-width: 52rem; margin: 0 auto; padding: .55rem 1rem; display: flex; align-items: center; gap: .6rem; }
.status { flex: 1; text-align: center; color: var(--muted); font-size: .9rem; }
.nav, .download { border: 1px solid var(--line); background: var(--bg); border-radius: 6px; padding: .45rem .9rem; cursor: pointer; }
.nav:disabled { opacity: .4; cursor: default; }
.download { background: var(--accent); border-color: var(--accent); color: var(--on-accent); font-weight: 600; }
.choices { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); gap: .35rem; }
.choice {
  width: 100%; text-align: left; cursor: pointer; background: var(--bg); border: 1px solid var(--line);
  border-radius: 6px; padding: .4rem .6rem;
}
.choice:hover { border-color: var(--accent); }
.choice[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: var(--on-accent); }
.hint { color: var(--muted); font-size: .9rem; margin: 0 0 .5rem; }
.correction-label { display: block; font-weight: 600; margin: .7rem 0 .3rem; }
.correction {
  display: block; width: 100%; min-height: 8rem; resize: vertical; font: inherit; color: inherit;
  background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .4rem .6rem;
}
textarea:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
[hidden] { display: none !important; }
@media (pointer: coarse) { .legend { display: none; } }
@media (max-width: 30rem) {
  .page { padding: .5rem .6rem calc(var(--bar, 3.5rem) + 3.5rem); }
  .card, .criterion { padding: .6rem .7rem; }
  .bar-inner { padding: .5rem .6rem; }
}
</style>
</head>
<body>
<div class="page">
<header class="top">
<div><h1 id="title">Review</h1><div id="position" class="position"></div></div>
<button type="button" id="download" class="download" hidden>Download scores</button>
</header>
<details id="help" class="help" hidden>
<summary>Instructions</summary>
<p id="instructions" class="text"></p>
</details>
<p id="legend" class="legend" hidden>Keys: a digit <kbd>0</kbd>&ndash;<kbd>9</kbd> scores the
marked criterion with the level of that number and moves on; <kbd>&uarr;</kbd> <kbd>&darr;</kbd> or
<kbd>k</kbd> <kbd>j</kbd> change criterion; <kbd>&rarr;</kbd> or <kbd>n</kbd> next item;
<kbd>&larr;</kbd> or <kbd>p</kbd> previous item. Below the criteria, say whether the answer is
usable; keys do nothing while you type a correction. Progress is kept in this browser; download
your scores when you are done.</p>
<main id="item"></main>
</div>
<nav id="bar" class="bar" aria-label="Items" hidden>
<p id="notice" class="notice" role="status" hidden></p>
<div class="bar-inner">
<button type="button" id="prev" class="nav">&larr; Previous</button>
<span id="status" class="status" aria-live="polite"></span>
<button type="button" id="next" class="nav">Next &rarr;</button>
</div>
</nav>
<script type="application/json" id="packet">)html";

// The page after the packet: its script (reviewer_page_script.cc), and the end of the document.
constexpr std::string_view kScriptOpen = "</script>\n<script>\n";
constexpr std::string_view kPageEnd = "</script>\n</body>\n</html>\n";

}  // namespace

std::string ScriptSafeJson(const nlohmann::json& value) {
  const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  // These characters occur in dump()'s output only inside strings, where a \u escape reads back
  // as the same character.
  for (size_t i = 0; i < text.size(); ++i) {
    switch (text[i]) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      case '\'':
        out += "\\u0027";
        break;
      default:
        // U+2028 and U+2029 (E2 80 A8/A9) end a line in older JavaScript.
        if (text.compare(i, 3, "\xE2\x80\xA8") == 0 || text.compare(i, 3, "\xE2\x80\xA9") == 0) {
          out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
          i += 2;
        } else {
          out += text[i];
        }
    }
  }
  return out;
}

std::string ReviewerPageHtml(const nlohmann::json& packet) {
  std::string page(kPageHead);
  page += ScriptSafeJson(packet);
  page += kScriptOpen;
  page += kReviewerPageScript;
  page += kPageEnd;
  return page;
}

}  // namespace stagegate::review
