// The reviewer page in a real browser (headless Chromium, driven by puppeteer-core).
//
//   node tests/node/reviewer_page_test.mjs PAGE.html DOWNLOAD_DIR [EXPECTED_ITEMS]
//
// Opens PAGE.html (written by write_reviewer_page from tests/review/packet.json) from a file://
// URL; fails on any console error, page error or request that leaves the file; checks that hostile
// packet text is shown as text and never runs; scores the first item with the mouse, the second
// with the keyboard alone and the rest with both; reloads and checks that the scores and times
// survived; downloads the scores into DOWNLOAD_DIR (left there) and checks the file line by line;
// checks the page without localStorage, and two tabs of one packet scoring in turn (neither loses
// the other's scores, even when one saves before it has heard of the other's). EXPECTED_ITEMS (default: all) is how many items, from
// the first, to score: the download must hold exactly those. Chromium: $CHROMIUM or
// /usr/bin/chromium. Exits 0 and prints one line on success, 1 with the reason on failure.

import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';
import puppeteer from 'puppeteer-core';

class Failure extends Error {}
const fail = (message) => {
  throw new Failure(message);
};
const check = (condition, message) => condition || fail(message);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const [pageArg, downloadArg, expectedArg] = process.argv.slice(2);
if (!pageArg || !downloadArg) {
  console.error('usage: node reviewer_page_test.mjs PAGE.html DOWNLOAD_DIR [EXPECTED_ITEMS]');
  process.exit(2);
}
const pagePath = path.resolve(pageArg);
const downloadDir = path.resolve(downloadArg);
const pageUrl = pathToFileURL(pagePath).href;

// Everything that must not happen, whenever it happens; checked after each step.
const incidents = [];
function watch(page, label) {
  page.on('console', (message) => {
    if (message.type() === 'error') incidents.push(`${label}: console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => incidents.push(`${label}: page error: ${error.message}`));
  page.on('request', (request) => {
    const scheme = new URL(request.url()).protocol;
    if (!['file:', 'data:', 'blob:'].includes(scheme)) {
      incidents.push(`${label}: request to ${request.url()}`);
    }
  });
}
// The last step checked, for the message of a run that never ends.
let reached = 'none: starting the browser';
function checkIncidents(step) {
  if (incidents.length) fail(`${step}: ${incidents.join('; ')}`);
  reached = step;
}

async function position(page) {
  return page.$eval('#position', (node) => node.textContent);
}

// The index of the marked criterion and, per criterion, the pressed level (null: none).
async function marks(page) {
  return page.$$eval('.criterion', (boxes) => ({
    current: boxes.findIndex((box) => box.classList.contains('current')),
    pressed: boxes.map((box) => {
      const on = [...box.querySelectorAll('button.level')].filter(
          (b) => b.getAttribute('aria-pressed') === 'true');
      return on.length === 1 ? Number(on[0].querySelector('.level-num').textContent) :
                               on.length === 0 ? null : 'several';
    }),
  }));
}

// Hostile text is in the DOM as text, and nothing from it was parsed as markup or ran.
async function checkShownAsText(page, item) {
  const shown = await page.evaluate(() => ({
    pwned: typeof window.__pwned,
    images: document.images.length,
    svgs: document.querySelectorAll('svg').length,
    scripts: [...document.scripts].map((s) => s.id || s.type || 'inline'),
    answer: document.querySelector('.answer .text')?.textContent,
    turns: [...document.querySelectorAll('.conversation .turn .text')].map((n) => n.textContent),
    whiteSpace: getComputedStyle(document.querySelector('.answer .text')).whiteSpace,
  }));
  check(shown.pwned === 'undefined', `item ${item.item}: injected script ran (window.__pwned set)`);
  check(shown.images === 0 && shown.svgs === 0, `item ${item.item}: packet text became elements`);
  check(shown.scripts.length === 2, `item ${item.item}: unexpected scripts: ${shown.scripts}`);
  check(shown.answer === item.answer, `item ${item.item}: the answer is not shown verbatim`);
  check(JSON.stringify(shown.turns) === JSON.stringify(item.conversation.map((t) => t.content)),
        `item ${item.item}: the conversation is not shown verbatim`);
  check(shown.whiteSpace === 'pre-wrap', `answer text has white-space ${shown.whiteSpace}`);
}

// The level for criterion c of item i: varied, and never the same for all items.
function planned(criteria, i) {
  return criteria.map((c, ci) => c.levels[(i + ci + 1) % c.levels.length].level);
}
// The key that scores a level is the level's own number.
const digitFor = (c, level) => String(level);

async function clickLevel(page, ci, level) {
  const boxes = await page.$$('.criterion');
  if (ci >= boxes.length) fail(`the page shows ${boxes.length} criteria, not ${ci + 1}`);
  const buttons = await boxes[ci].$$('button.level');
  for (const button of buttons) {
    const value = await button.$eval('.level-num', (n) => Number(n.textContent));
    if (value === level) {
      // As a reader would: bring the button into the middle of the screen, clear of the fixed
      // bar at the bottom, then click it where it is.
      await button.evaluate((b) => b.scrollIntoView({block: 'center'}));
      return button.click();
    }
  }
  fail(`criterion ${ci + 1} has no button for level ${level}`);
}

async function expectMarks(page, want, step) {
  const got = await marks(page);
  const wantText = JSON.stringify(want);
  const gotText = JSON.stringify({current: got.current, pressed: got.pressed});
  check(gotText === wantText, `${step}: expected ${wantText}, the page shows ${gotText}`);
}

async function expectPosition(page, n, total, step) {
  const text = await position(page);
  check(text === `Item ${n} of ${total}`, `${step}: position reads "${text}"`);
}

// What is wrong with the position of a page loaded again, to open on item n: on failure what the
// page said and what it had kept, to tell a lost save from a misread one. '' when nothing is.
async function reopenedWrong(page, n, total) {
  const text = await position(page);
  if (text === `Item ${n} of ${total}`) return '';
  const notice = await page.$eval('#notice', (node) => (node.hidden ? '(none)' : node.textContent));
  const kept = await page.evaluate(() => JSON.stringify(Object.entries(localStorage)));
  return `position reads "${text}"; notice: ${notice}; localStorage: ${kept.slice(0, 800)}`;
}

// What a document of the packet found kept when it opened, recorded before the page's own script
// runs (installed with evaluateOnNewDocument).
function recordKeptAtOpen() {
  try {
    window.keptAtOpen = JSON.stringify(Object.entries(localStorage));
  } catch (e) {
    window.keptAtOpen = `unreadable (${e.message})`;
  }
}

// Whether a list of [key, value] pairs (as recordKeptAtOpen writes it) holds a save of the packet
// with any score in it.
function holdsScores(entries, packet) {
  try {
    return JSON.parse(entries).some(([key, value]) => key.includes(packet.export_id) &&
        key.includes(packet.reviewer) && JSON.parse(value).items.some((e) => e.scores.length > 0));
  } catch (e) {
    return false;
  }
}

// Loads `page` (a tab of the packet with recordKeptAtOpen installed) with `load` until it opens on
// the packet's kept scores, then asks `problem()`, which says what is wrong with the page as loaded
// or returns ''. A new document can start before the browser shows it what the old one saved
// moments earlier, although another tab read it all: under load the page has opened on nothing
// kept (three times in CI, once here at load 16). Such a load cannot show the scores, and may even
// look right (a packet scored to the end reopens on item 1 either way), so it is never judged: the
// page writes nothing when it opens, what is kept outlives such a load, and the page is loaded
// again, for up to 15 s. A load that opened on kept scores and shows the wrong thing fails at once.
// Returns a note when more than one load was needed.
async function reopen(page, load, packet, what, problem) {
  const deadline = Date.now() + 15000;
  for (let loads = 1; ; ++loads) {
    await load();
    const seen = await page.evaluate(() => window.keptAtOpen);
    if (!holdsScores(seen, packet)) {
      if (Date.now() > deadline) fail(`${what}: ${loads} loads in 15 s, each opening on nothing kept`);
      continue;
    }
    const wrong = await problem();
    if (wrong) fail(`${what}: ${wrong}` + (loads === 1 ? '' : ` (load ${loads}; the first opened on nothing kept)`));
    return loads === 1 ? '' : `${what}: ${loads} loads, the first opening on nothing kept`;
  }
}

// Scores item 0 by clicking each planned level.
async function scoreWithMouse(page, criteria, levels) {
  for (let ci = 0; ci < criteria.length; ++ci) await clickLevel(page, ci, levels[ci]);
  await expectMarks(page, {current: criteria.length - 1, pressed: levels}, 'after mouse scoring');
}

// Scores the item shown with keys alone, going through a wrong score, arrows and j/k on the way.
async function scoreWithKeys(page, criteria, levels) {
  const pressed = criteria.map(() => null);
  const first = criteria[0];
  const wrong = first.levels.find((l) => l.level !== levels[0]).level;
  await page.keyboard.press(digitFor(first, wrong));
  pressed[0] = wrong;
  await expectMarks(page, {current: 1, pressed}, 'a digit scores and moves on');
  await page.keyboard.press('ArrowUp');
  await expectMarks(page, {current: 0, pressed}, 'ArrowUp');
  await page.keyboard.press('j');
  await page.keyboard.press('k');
  await expectMarks(page, {current: 0, pressed}, 'j then k');
  for (let ci = 0; ci < criteria.length; ++ci) {
    await page.keyboard.press(digitFor(criteria[ci], levels[ci]));
    pressed[ci] = levels[ci];
  }
  await page.keyboard.press('ArrowDown');  // already on the last: stays there
  await expectMarks(page, {current: criteria.length - 1, pressed}, 'after keyboard scoring');
}

async function download(page, fileName) {
  const target = path.join(downloadDir, fileName);
  fs.rmSync(target, {force: true});
  const cdp = await page.createCDPSession();
  await cdp.send('Browser.setDownloadBehavior', {behavior: 'allow', downloadPath: downloadDir});
  await page.click('#download');
  for (let waited = 0; waited < 10000; waited += 100) {
    if (fs.existsSync(target) && !fs.existsSync(target + '.crdownload')) {
      return fs.readFileSync(target, 'utf8');
    }
    await sleep(100);
  }
  fail(`no download ${target} after 10 s`);
}

// The correction typed into the first item: markup, quotes and a line break, kept as text.
const kCorrection = 'Book it in the <b>HR portal</b> & tell "your" manager.\nThen wait.';

// Says the answer shown is usable after correction and types kCorrection over the answer the box
// starts with, then leaves the box; returns the page's own time spent typing, in seconds.
async function correctShownItem(page, answer) {
  await clickChoice(page, 'corrected');
  const box = await page.$eval('#correction', (n) => ({
    focused: document.activeElement === n, value: n.value, hidden: n.closest('[hidden]') !== null}));
  check(box.focused && !box.hidden, 'choosing "usable after correction" does not open the correction box');
  check(box.value === answer, 'the correction box does not start with the answer');
  // Until the answer is changed there is no correction: the page asks for one, and its download
  // would leave the judgement out.
  const asking = await page.$eval('#status', (n) => n.textContent);
  check(asking.endsWith('; write your correction'), `before correcting, the status reads "${asking}"`);
  const started = await page.evaluate(() => {
    document.getElementById('correction').select();
    return performance.now();
  });
  await page.keyboard.type(kCorrection, {delay: 10});
  const ended = await page.evaluate(() => {
    document.getElementById('correction').blur();
    return performance.now();
  });
  const status = await page.$eval('#status', (n) => n.textContent);
  check(!status.includes('usable'), `after correcting, the status still asks: "${status}"`);
  return (ended - started) / 1000;
}

async function clickChoice(page, value) {
  const button = await page.$(`button.choice[data-usability="${value}"]`);
  if (!button) fail(`no usability choice ${value}`);
  await button.evaluate((b) => b.scrollIntoView({block: 'center'}));
  await button.click();
  const pressed = await page.$$eval('button.choice', (bs) =>
    bs.filter((b) => b.getAttribute('aria-pressed') === 'true').map((b) => b.dataset.usability));
  check(JSON.stringify(pressed) === JSON.stringify([value]), `after choosing ${value} the page shows ${pressed}`);
}

function checkScoresFile(text, packet, expected) {
  check(text.endsWith('\n'), 'the scores file does not end with a newline');
  const lines = text.slice(0, -1).split('\n');
  const header = JSON.stringify({format: 'stagegate-scores', version: 1,
                                 export_id: packet.export_id, reviewer: packet.reviewer});
  check(lines[0] === header, `header line is ${lines[0]}, expected ${header}`);
  check(lines.length === 1 + expected.length,
        `the scores file has ${lines.length - 1} item lines, expected ${expected.length}`);
  const times = [];
  expected.forEach((want, k) => {
    const line = lines[1 + k];
    const match = /,"seconds":(\d+(?:\.\d)?)(,"usability".*)?\}$/.exec(line);
    check(match, `line ${k + 2} has no seconds with at most one decimal: ${line}`);
    const scores = packet.rubric.criteria.map((c, ci) => `"${c.id}":${want.levels[ci]}`).join(',');
    let usability = '';
    const seconds = Number(match[1]);
    if (want.usability === 'corrected') {
      const spent = /,"correction_seconds":(\d+(?:\.\d)?)$/.exec(match[2] || '');
      check(spent, `line ${k + 2} has no correction seconds: ${line}`);
      const correction = Number(spent[1]);
      // The page counted the typing (to a tenth of a second), and no more than the item's time.
      check(correction > 0 && correction >= Math.floor(want.typing * 10) / 10 - 0.1 && correction <= seconds,
            `item ${want.item}: ${correction} s correcting, ${want.typing.toFixed(2)} s typing, ${seconds} s on the item`);
      usability = `,"usability":"corrected","corrected_text":${JSON.stringify(kCorrection)},` +
                  `"correction_seconds":${spent[1]}`;
    } else if (want.usability) {
      usability = `,"usability":"${want.usability}"`;
    }
    const exact = `{"item":"${want.item}","scores":{${scores}},"seconds":${match[1]}${usability}}`;
    check(line === exact, `line ${k + 2} is ${line}, expected ${exact}`);
    check(seconds > 0, `item ${want.item}: ${seconds} seconds`);
    times.push(seconds);
  });
  return times;
}

// Time counts only while the document is visible: hidden for 1.2 s adds (almost) nothing, visible
// for 0.5 s adds what the page itself timed as visible. Visibility is faked: headless Chromium is
// always visible. Each change happens in one call into the page, which returns its own clock: the
// round trips from here, slow on a loaded machine, are not time the page could count.
async function checkClockPausesWhenHidden(page, packet, storageKey) {
  const shown = Number((await position(page)).split(' ')[1]) - 1;
  const id = packet.items[shown].item;
  const setVisibility = (states) => page.evaluate((values) => {
    for (const value of values) {
      Object.defineProperty(document, 'visibilityState', {value, configurable: true});
      document.dispatchEvent(new Event('visibilitychange'));
    }
    return performance.now();
  }, states);
  const stored = () => page.evaluate((key, item) => {
    return JSON.parse(localStorage.getItem(key)).items.find((e) => e.item === item).seconds;
  }, storageKey, id);
  await setVisibility(['hidden']);
  const before = await stored();
  await sleep(1200);
  await setVisibility(['visible', 'hidden']);  // shown and hidden again at once
  const hidden = await stored() - before;
  check(hidden < 0.05, `${hidden.toFixed(3)} s counted while the page was hidden`);
  const shownAt = await setVisibility(['visible']);
  await sleep(500);
  const hiddenAt = await setVisibility(['hidden']);
  const timed = (hiddenAt - shownAt) / 1000;
  const visible = await stored() - before - hidden;
  check(timed >= 0.5 && Math.abs(visible - timed) < 0.05,
        `${visible.toFixed(3)} s counted for ${timed.toFixed(3)} s visible`);
  await page.evaluate(() => delete document.visibilityState);
}

// The page with localStorage refused, as some browsers do for file:// pages: it says so and works.
async function checkWithoutStorage(browser, criteria) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  watch(page, 'no-storage page');
  await page.evaluateOnNewDocument(() => {
    Object.defineProperty(window, 'localStorage', {
      get() {
        throw new DOMException('denied', 'SecurityError');
      },
    });
  });
  await page.goto(pageUrl, {waitUntil: 'load'});
  const notice = await page.$eval('#notice', (n) => (n.hidden ? '' : n.textContent));
  check(/lost if you reload/.test(notice), `without localStorage the notice reads "${notice}"`);
  await clickLevel(page, 0, criteria[0].levels[0].level);
  const got = await marks(page);
  check(got.pressed[0] === criteria[0].levels[0].level, 'without localStorage a click does not score');
  await context.close();
  checkIncidents('without localStorage');
}

// A new browser context with the page open in two tabs, the first and one named `name`;
// `onNewDocument`, when given, runs in the second tab before the page's own script.
async function twoTabs(browser, name, onNewDocument) {
  const context = await browser.createBrowserContext();
  const first = await context.newPage();
  const second = await context.newPage();
  watch(first, 'first tab');
  watch(second, name);
  if (onNewDocument) await second.evaluateOnNewDocument(onNewDocument);
  for (const tab of [first, second]) {
    await tab.setViewport({width: 900, height: 1000});
    await tab.goto(pageUrl, {waitUntil: 'load'});
  }
  return [context, first, second];
}

// Every digit key on every criterion, in a tab of its own: a digit that is a level of the marked
// criterion scores that level (0 is level 0, never the first level), and one that is not scores
// nothing and says which levels there are.
async function checkEveryKey(browser, criteria) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  watch(page, 'every key');
  await page.goto(pageUrl, {waitUntil: 'load'});
  const pressed = criteria.map(() => null);
  for (let ci = 0; ci < criteria.length; ++ci) {
    const levels = new Set(criteria[ci].levels.map((l) => l.level));
    for (let digit = 0; digit <= 9; ++digit) {
      for (let k = 0; k < criteria.length; ++k) await page.keyboard.press('k');
      for (let k = 0; k < ci; ++k) await page.keyboard.press('j');
      await page.keyboard.press(String(digit));
      const step = `key ${digit} on criterion ${ci + 1} (levels ${[...levels].join(', ')})`;
      if (levels.has(digit)) {
        pressed[ci] = digit;
        await expectMarks(page, {current: Math.min(ci + 1, criteria.length - 1), pressed}, step);
      } else {
        await expectMarks(page, {current: ci, pressed}, step);
        const status = await page.$eval('#status', (n) => n.textContent);
        check(status.includes(`no level ${digit}`), `${step}: the status reads "${status}"`);
      }
    }
    check(pressed[ci] === Math.max(...[...levels].filter((l) => l <= 9)),
          `criterion ${ci + 1} kept ${pressed[ci]} after every key`);
  }
  await context.close();
  checkIncidents('every key');
}

// Waits, up to 15 s, until `page` shows `levelA` and `levelB` for the first two criteria: a save in
// another tab reaches this one's storage asynchronously (and, in another renderer process, later),
// so a reload before it arrived could read what was kept before that save.
async function waitForFirstTwo(page, levelA, levelB, what) {
  await page.waitForFunction(
      (a, b) => {
        const pressed = [...document.querySelectorAll('.criterion')].slice(0, 2).map(
            (box) => box.querySelector('button.level[aria-pressed="true"] .level-num')?.textContent);
        return pressed[0] === String(a) && pressed[1] === String(b);
      },
      {timeout: 15000}, levelA, levelB)
      .catch(async () => fail(`${what}: after 15 s it shows ${JSON.stringify((await marks(page)).pressed)}, ` +
                              `expected ${levelA} and ${levelB} for the first two criteria`));
}

// The notice a page shows, or '' when it shows none.
const noticeOf = (page) => page.$eval('#notice', (n) => (n.hidden ? '' : n.textContent));

// What the page's localStorage keeps, for a failure's message: each key with the scores of its
// save, item by item, or how it fails to read. It tells a save that never reached storage from
// one the page did not read back.
const keptOf = (page) => page.evaluate(() => {
  try {
    const out = [];
    // Read as entries, not through getItem, which a check may blind.
    for (const [key, text] of Object.entries(localStorage)) {
      let scores;
      try {
        scores = JSON.parse(text).items.map((entry) => (entry.scores || []).map((s) => s[1]));
      } catch (e) {
        scores = `${text.length} characters that do not parse`;
      }
      out.push(`${key}: ${JSON.stringify(scores)}`);
    }
    return out.length ? out.join('; ') : 'nothing';
  } catch (e) {
    return `unreadable (${e.message})`;
  }
});

// Waits, up to 15 s, until storage as another tab of the same origin reads it holds `complete`
// fully scored items of the packet. A tab's saves reach the browser's storage asynchronously, so a
// reload before they arrived could start from what was kept earlier and write over the rest; the
// probe is a blank page of its own, so the packet's tab sees no other tab.
async function waitUntilKept(browser, packet, complete, criteria) {
  const probePath = path.join(downloadDir, 'storage-probe.html');
  fs.writeFileSync(probePath, '<!doctype html><title>probe</title>');
  const probe = await browser.newPage();
  await probe.goto(pathToFileURL(probePath).href, {waitUntil: 'load'});
  let failure = '';
  await probe.waitForFunction((exportId, reviewer, count, want) => {
    const key = Object.keys(localStorage).find((k) => k.includes(exportId) && k.includes(reviewer));
    try {
      return JSON.parse(localStorage.getItem(key)).items.filter((e) => e.scores.length === count).length >= want;
    } catch (e) {
      return false;
    }
  }, {timeout: 15000, polling: 50}, packet.export_id, packet.reviewer, criteria.length, complete)
      .catch(async () => {
        failure = `before reload: after 15 s storage, as another tab reads it, does not hold ` +
                  `${complete} scored items; it keeps ${await keptOf(probe)}`;
      });
  await probe.close();
  fs.unlinkSync(probePath);
  check(!failure, failure);
}

// The same packet in two tabs, scoring in turn: each tab shows the other's scores as they are
// given, and what is kept at the end has both (the last save used to win).
async function checkTwoTabs(browser, criteria) {
  const [context, first, second] = await twoTabs(browser, 'second tab');
  const levelA = criteria[0].levels[0].level;
  const levelB = criteria[1].levels[criteria[1].levels.length - 1].level;
  // Input goes to the tab in front, as it does for a person.
  await first.bringToFront();
  await clickLevel(first, 0, levelA);
  const clicked = await marks(first);
  check(clicked.pressed[0] === levelA, `the first tab, clicked on level ${levelA}, shows ` +
        `${JSON.stringify(clicked.pressed)}`);
  // The page saved the score: what the first tab itself reads back holds it. What follows waits
  // on the browser to show the second tab that save.
  const own = await keptOf(first);
  check(own.includes(`[${levelA}]`), `the first tab did not save its score ${levelA}: it keeps ${own}`);
  await second.bringToFront();
  await second.waitForFunction(
      (level) => document.querySelector('.criterion button.level[aria-pressed="true"] .level-num')
                     ?.textContent === String(level),
      {timeout: 15000}, levelA).catch(async () => fail(
      `the second tab never showed the first tab's score ${levelA}: it shows ` +
      `${JSON.stringify((await marks(second)).pressed)}, the first tab ` +
      `${JSON.stringify((await marks(first)).pressed)} (kept: ${await keptOf(second)})`));
  const notice = await second.$eval('#notice', (n) => (n.hidden ? '' : n.textContent));
  check(/open in another tab/.test(notice), `the second tab's notice reads "${notice}"`);
  await clickLevel(second, 1, levelB);
  // The first tab saves again (as it does every 5 s and on leaving): the second tab's score stays.
  await first.bringToFront();
  await waitForFirstTwo(first, levelA, levelB, 'the first tab, once the second scored');
  await first.evaluate(() => window.dispatchEvent(new Event('pagehide')));
  await first.reload({waitUntil: 'load'});
  const got = await marks(first);
  check(got.pressed[0] === levelA && got.pressed[1] === levelB,
        `after both tabs scored, the first tab shows ${JSON.stringify(got.pressed)}, expected ` +
        `${levelA} and ${levelB} for the first two criteria (notice: "${await noticeOf(first)}"; ` +
        `kept: ${await keptOf(first)})`);
  await context.close();
  checkIncidents('two tabs');
}

// Where each level button of the item shown is on screen, to the pixel.
const levelBoxes = (page) => page.$$eval('button.level', (buttons) => buttons.map((b) => {
  const r = b.getBoundingClientRect();
  return [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)];
}));

// A notice that comes while the reviewer scores (here: the packet saved in another tab) moves
// nothing they might be about to click, and the foot of the page still clears the bar it makes
// taller. A notice above the criteria used to push every button down under the pointer.
async function checkNoticeMovesNothing(browser, criteria) {
  const [context, first, second] = await twoTabs(browser, 'notice tab');
  await first.bringToFront();
  await first.evaluate(() => {
    document.getElementById('notice').hidden = true;
    window.scrollTo(0, 0);
  });
  const before = await levelBoxes(first);
  // A score in the other tab changes what is kept, so its save reaches this tab (one that
  // changes nothing raises no storage event).
  const last = criteria.length - 1;
  await second.bringToFront();
  await clickLevel(second, last, criteria[last].levels[0].level);
  await first.bringToFront();
  await first.waitForFunction(() => !document.getElementById('notice').hidden, {timeout: 15000})
      .catch(() => fail('the other tab\'s score never showed a notice'));
  const after = await levelBoxes(first);
  check(JSON.stringify(after) === JSON.stringify(before),
        `the notice moved the level buttons: ${JSON.stringify(before)} became ${JSON.stringify(after)}`);
  // Scrolled to the foot, the last level clears the bar, notice and all.
  const clear = await first.evaluate(() => {
    window.scrollTo(0, document.documentElement.scrollHeight);
    const buttons = document.querySelectorAll('button.level');
    const last = buttons[buttons.length - 1].getBoundingClientRect().bottom;
    const bar = document.getElementById('bar').getBoundingClientRect().top;
    return {last: Math.round(last), bar: Math.round(bar)};
  });
  check(clear.last <= clear.bar, `at the foot of the page the last level ends at ${clear.last} px, ` +
        `below the top of the bar at ${clear.bar} px`);
  const levelA = criteria[0].levels[0].level;
  await clickLevel(first, 0, levelA);
  const got = await marks(first);
  check(got.pressed[0] === levelA, `with the notice shown, a click on level ${levelA} scored ` +
        `${JSON.stringify(got.pressed)}`);
  await context.close();
  checkIncidents('notice');
}

// A tab whose storage event from the other tab has not arrived yet (held back here, as a busy
// tab holds it queued) saves what it holds: the other tab's score must not be dropped by it.
async function checkStaleTab(browser, criteria) {
  // Registered before the page's own script, this listener runs first and the page never hears;
  // the count shows that something was held back.
  const [context, first, stale] = await twoTabs(browser, 'stale tab', () => {
    window.heldBack = 0;
    window.addEventListener('storage', (e) => {
      ++window.heldBack;
      e.stopImmediatePropagation();
    }, true);
  });
  const levelA = criteria[0].levels[0].level;
  const levelB = criteria[1].levels[criteria[1].levels.length - 1].level;
  await first.bringToFront();
  await clickLevel(first, 0, levelA);
  await stale.bringToFront();
  await stale.waitForFunction(() => window.heldBack > 0, {timeout: 15000})
      .catch(() => fail('the stale tab never had the first tab\'s save to hold back'));
  await clickLevel(stale, 1, levelB);
  const after = await marks(stale);
  check(after.pressed[0] === levelA && after.pressed[1] === levelB,
        `the stale tab, once it saved, shows ${JSON.stringify(after.pressed)}, expected ${levelA} ` +
        `and ${levelB} for the first two criteria`);
  await first.bringToFront();
  await waitForFirstTwo(first, levelA, levelB, 'the first tab, once the stale tab saved');
  await first.reload({waitUntil: 'load'});
  const got = await marks(first);
  check(got.pressed[0] === levelA && got.pressed[1] === levelB,
        `after a stale tab saved, the first tab shows ${JSON.stringify(got.pressed)}, expected ` +
        `${levelA} and ${levelB} for the first two criteria (notice: "${await noticeOf(first)}"; ` +
        `kept: ${await keptOf(first)})`);
  await context.close();
  checkIncidents('stale tab');
}

// A score replaced within the same millisecond (a quick correction, here with Date.now() held
// still): the replacement is what is kept, not the score it replaced. A save reads what is kept
// back before writing, and a tie in time used to go to the higher level.
async function checkSameMillisecond(browser, packet, criteria) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  watch(page, 'frozen clock');
  await page.evaluateOnNewDocument(() => {
    const now = Date.now();
    Date.now = () => now;
  });
  await page.setViewport({width: 900, height: 1000});
  await page.goto(pageUrl, {waitUntil: 'load'});
  const levels = criteria[0].levels.map((l) => l.level);
  const high = Math.max(...levels);
  const low = Math.min(...levels);
  await clickLevel(page, 0, high);
  await clickLevel(page, 0, low);
  const before = await marks(page);
  check(before.pressed[0] === low,
        `a score replaced in the same millisecond shows ${before.pressed[0]}, expected ${low}`);
  await page.evaluateOnNewDocument(recordKeptAtOpen);
  const note = await reopen(page, () => page.reload({waitUntil: 'load'}), packet,
                            'a score replaced in the same millisecond', async () => {
    const after = (await marks(page)).pressed[0];
    return after === low ? '' : `reads ${after} after a reload, expected ${low}`;
  });
  await context.close();
  checkIncidents('frozen clock');
  return note;
}

// A page that opens before the browser shows it what another page of the packet kept (here
// localStorage.getItem reads nothing while the document loads, then for good) writes nothing over
// what is kept, neither when it opens nor when it saves later with nothing judged: it used to save
// at once, and its empty save replaced every score.
async function checkOpeningWritesNothing(browser, packet, criteria) {
  const context = await browser.createBrowserContext();
  const first = await context.newPage();
  watch(first, 'scoring tab');
  await first.goto(pageUrl, {waitUntil: 'load'});
  const level = criteria[0].levels[0].level;
  await clickLevel(first, 0, level);
  await first.close({runBeforeUnload: true});
  const late = await context.newPage();
  watch(late, 'opening tab');
  await late.evaluateOnNewDocument(() => {
    const getItem = Storage.prototype.getItem;
    Storage.prototype.getItem = function(key) {
      return document.readyState === 'loading' || window.readBlind ? null : getItem.call(this, key);
    };
  });
  await late.goto(pageUrl, {waitUntil: 'load'});
  const shown = await marks(late);
  check(shown.pressed.every((l) => l === null),
        `the page that opened reading nothing shows ${JSON.stringify(shown.pressed)}: it was not kept from the save`);
  // It goes on reading nothing and moves to the next item, which saves: a page holding no
  // judgement writes nothing either.
  await late.evaluate(() => {
    window.readBlind = true;
  });
  await late.keyboard.press('n');
  await expectPosition(late, 2, packet.items.length, 'the page that reads nothing, after n');
  // Storage as this tab reads it (not through getItem) holds the score, once the first tab's save
  // has reached it; a save of the opening page would have replaced it here at once.
  await late.waitForFunction((exportId, reviewer) => Object.entries(localStorage).some(([key, value]) => {
    try {
      return key.includes(exportId) && key.includes(reviewer) &&
             JSON.parse(value).items.some((e) => e.scores.length > 0);
    } catch (e) {
      return false;
    }
  }), {timeout: 15000, polling: 50}, packet.export_id, packet.reviewer)
      .catch(async () => fail(`a page that opened reading nothing wrote over the kept score: ` +
                              `storage keeps ${await keptOf(late)}`));
  await context.close();
  checkIncidents('opening writes nothing');
}

async function run(browser) {
  const page = await browser.newPage();
  watch(page, 'page');
  await page.setViewport({width: 900, height: 1000});
  await page.goto(pageUrl, {waitUntil: 'load'});
  checkIncidents('loading');

  const packet = await page.evaluate(() => {
    try {
      return JSON.parse(document.getElementById('packet').textContent);
    } catch (error) {
      return null;
    }
  });
  check(packet, 'the packet in the page does not parse: its text ended its <script> element early?');
  const unusable = await page.$eval('#item', (n) => n.querySelector('ul')?.textContent);
  check(!unusable, `the page finds the packet unusable: ${unusable}`);
  const {criteria} = packet.rubric;
  const sorted = criteria.map((c) => ({...c, levels: [...c.levels].sort((a, b) => a.level - b.level)}));
  const total = packet.items.length;
  const toScore = expectedArg === undefined ? total : Number(expectedArg);
  check(Number.isInteger(toScore) && toScore >= 0 && toScore <= total,
        `EXPECTED_ITEMS must be 0..${total}, not ${expectedArg}`);
  check(criteria.length >= 2, 'the fixture needs at least two criteria');
  const hostile = packet.items.filter((it) => JSON.stringify(it).includes('<script>'));
  // A real export (STAGEGATE_ANY_PACKET=1) need not hold hostile text; the fixture must.
  if (!process.env.STAGEGATE_ANY_PACKET) check(hostile.length >= 1, 'the fixture has no hostile item');
  const notice = await page.$eval('#notice', (n) => (n.hidden ? '' : n.textContent));
  check(notice === '', `unexpected notice: ${notice}`);

  // Every item: shown as text, including the hostile ones; a small screen does not scroll sideways.
  await page.setViewport({width: 360, height: 740});
  for (let i = 0; i < total; ++i) {
    await expectPosition(page, i + 1, total, 'walking the items');
    await checkShownAsText(page, packet.items[i]);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    check(overflow <= 0, `item ${i + 1} is ${overflow}px wider than a 360px screen`);
    await page.click('#next');
  }
  await page.setViewport({width: 900, height: 1000});
  const legend = await page.$eval('#legend', (n) => n.textContent);
  check(/previous item/.test(legend), 'no key legend');
  await page.click('#prev');
  for (let i = total - 1; i > 0; --i) await page.keyboard.press('p');
  await expectPosition(page, 1, total, 'back to the first item with p');

  const expected = [];
  for (let i = 0; i < toScore; ++i) {
    const levels = planned(sorted, i);
    await expectPosition(page, i + 1, total, `scoring item ${i + 1}`);
    await sleep(250);  // time on the item
    if (i === 0) {
      await scoreWithMouse(page, sorted, levels);
    } else if (i === 1) {
      await page.keyboard.press('n');  // out and back: n, p, ArrowRight, ArrowLeft
      await expectPosition(page, 3 <= total ? 3 : 2, total, 'n');
      await page.keyboard.press('p');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowLeft');
      await expectPosition(page, 2, total, 'n p ArrowRight ArrowLeft');
      await scoreWithKeys(page, sorted, levels);
    } else {
      await clickLevel(page, 0, levels[0]);
      for (let ci = 1; ci < sorted.length; ++ci) {
        await page.keyboard.press(digitFor(sorted[ci], levels[ci]));
      }
      await expectMarks(page, {current: sorted.length - 1, pressed: levels}, `item ${i + 1}`);
    }
    const want = {item: packet.items[i].item, levels};
    // The first answer needs a correction, the second is usable as it is, the rest are not judged.
    if (i === 0) {
      want.usability = 'corrected';
      want.typing = await correctShownItem(page, packet.items[i].answer);
    } else if (i === 1) {
      await clickChoice(page, 'as_is');
      want.usability = 'as_is';
    }
    expected.push(want);
    if (i + 1 < total) await page.keyboard.press(i % 2 ? 'n' : 'ArrowRight');
    checkIncidents(`scoring item ${i + 1}`);
  }
  // An unfinished item is kept but not downloaded.
  if (toScore < total) {
    await expectPosition(page, toScore + 1, total, 'the first item left');
    await clickLevel(page, 0, sorted[0].levels[0].level);
  }
  const label = await page.$eval('#download', (n) => n.textContent);
  check(label === `Download scores (${toScore} of ${total} complete)`, `download button: "${label}"`);

  await waitUntilKept(browser, packet, toScore, criteria);
  await page.evaluateOnNewDocument(recordKeptAtOpen);
  const reopened = toScore < total ? toScore + 1 : 1;
  const notes = [];
  const wrongPosition = () => reopenedWrong(page, reopened, total);
  notes.push(await reopen(page, () => page.reload({waitUntil: 'load'}), packet,
                          'after reload (the first unfinished item)', wrongPosition));
  checkIncidents('reloading');
  notes.push(await reopen(page, () => page.goto(pageUrl, {waitUntil: 'load'}), packet,
                          'after a new load', wrongPosition));
  for (let i = reopened - 1; i > 0; --i) await page.keyboard.press('ArrowLeft');
  for (let i = 0; i < toScore; ++i) {
    const got = await marks(page);
    check(JSON.stringify(got.pressed) === JSON.stringify(expected[i].levels),
          `after reload item ${i + 1} shows ${JSON.stringify(got.pressed)}, expected ` +
              JSON.stringify(expected[i].levels));
    const kept = await page.evaluate(() => ({
      pressed: [...document.querySelectorAll('button.choice')]
          .filter((b) => b.getAttribute('aria-pressed') === 'true').map((b) => b.dataset.usability),
      correction: document.getElementById('correction').value,
    }));
    check(JSON.stringify(kept.pressed) === JSON.stringify(expected[i].usability ? [expected[i].usability] : []),
          `after reload item ${i + 1} shows usability ${kept.pressed}`);
    if (expected[i].usability === 'corrected') {
      check(kept.correction === kCorrection, `after reload the correction reads ${JSON.stringify(kept.correction)}`);
    }
    await page.keyboard.press('n');
  }
  if (toScore < total) {
    const got = await marks(page);
    check(got.pressed[0] === sorted[0].levels[0].level && got.pressed.slice(1).every((l) => l === null),
          `after reload the unfinished item shows ${JSON.stringify(got.pressed)}`);
  }
  const keys = await page.evaluate(() => Object.keys(localStorage));
  const storageKey = keys.find((k) => k.includes(packet.export_id) && k.includes(packet.reviewer));
  check(storageKey, `no localStorage key names the export and reviewer: ${keys}`);
  await checkClockPausesWhenHidden(page, packet, storageKey);

  const fileName = `scores-${packet.reviewer}-${packet.export_id}.jsonl`;
  const text = await download(page, fileName);
  const times = checkScoresFile(text, packet, expected);
  checkIncidents('downloading');

  await checkWithoutStorage(browser, sorted);
  await checkEveryKey(browser, sorted);
  await checkNoticeMovesNothing(browser, sorted);
  await checkTwoTabs(browser, sorted);
  await checkStaleTab(browser, sorted);
  notes.push(await checkSameMillisecond(browser, packet, sorted));
  await checkOpeningWritesNothing(browser, packet, sorted);
  await page.close();
  return {total, toScore, fileName, times, notes: notes.filter((n) => n)};
}

const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
let browser;
try {
  browser = await puppeteer.launch({executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu']});
} catch (error) {
  console.error(`reviewer page test: FAILED: cannot start ${executablePath} (set CHROMIUM, or ` +
                `apt-get install chromium): ${error.message}`);
  process.exit(1);
}
const deadline = setTimeout(() => {
  console.error(`reviewer page test: FAILED: took over 90 s; the last step passed: ${reached}`);
  process.exit(1);
}, 90000);
let code = 0;
try {
  fs.mkdirSync(downloadDir, {recursive: true});
  const r = await run(browser);
  const how = ['mouse', 'keys', 'both'].slice(0, r.toScore).join(', ');
  console.log(`reviewer page test: passed: ${r.toScore} of ${r.total} items scored (${how}), ` +
              `kept over reload, hostile text inert, no requests; ` +
              `${path.join(downloadDir, r.fileName)} holds ${r.toScore} items, seconds ` +
              r.times.join(', ') + (r.notes.length ? `; ${r.notes.join('; ')}` : ''));
} catch (error) {
  console.error(`reviewer page test: FAILED: ${error instanceof Failure ? error.message : error.stack}`);
  code = 1;
} finally {
  clearTimeout(deadline);
  await browser.close();
}
process.exit(code);
