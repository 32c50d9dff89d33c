// The reviewer page's script, as one JavaScript source; see reviewer_page_script.h.

#include "review/reviewer_page_script.h"

namespace stagegate::review {

const std::string_view kReviewerPageScript = R"js('use strict';
(() => {
  const byId = (id) => document.getElementById(id);
  const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  const isName = (v) => typeof v === 'string' && v.length > 0;
  const asText = (v) => (typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v));

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function readCriteria(rubric, problems) {
    const criteria = [];
    if (!Array.isArray(rubric.criteria) || rubric.criteria.length < 1 || rubric.criteria.length > 12) {
      problems.push('"rubric.criteria" must be a list of 1 to 12 criteria');
      return criteria;
    }
    const seen = new Set();
    rubric.criteria.forEach((c, i) => {
      const where = 'criterion ' + (i + 1);
      if (!isObject(c) || !isName(c.id)) return problems.push(where + ': "id" must be a non-empty string');
      if (seen.has(c.id)) problems.push(where + ': the id "' + c.id + '" is used twice');
      seen.add(c.id);
      const levels = Array.isArray(c.levels) ? c.levels : [];
      const integers = levels.every((l) => isObject(l) && Number.isInteger(l.level));
      if (levels.length < 1 || levels.length > 10 || !integers ||
          new Set(levels.map((l) => l.level)).size !== levels.length) {
        return problems.push(where + ' ("' + c.id + '"): "levels" must be 1 to 10 distinct integers');
      }
      criteria.push({
        id: c.id,
        question: asText(c.question),
        hard: c.hard === true,
        levels: levels.map((l) => ({level: l.level, anchor: asText(l.anchor)}))
                      .sort((a, b) => a.level - b.level),
      });
    });
    return criteria;
  }

  function readItems(raw, problems) {
    const items = [];
    if (!Array.isArray(raw) || raw.length === 0) {
      problems.push('"items" must be a list of at least one item');
      return items;
    }
    const seen = new Set();
    raw.forEach((it, i) => {
      if (!isObject(it) || !isName(it.item)) return problems.push('item ' + (i + 1) + ': "item" must be a non-empty string');
      if (seen.has(it.item)) problems.push('item ' + (i + 1) + ': the id "' + it.item + '" is used twice');
      seen.add(it.item);
      const turns = Array.isArray(it.conversation) ? it.conversation.filter(isObject) : [];
      items.push({
        id: it.item,
        conversation: turns.map((t) => ({role: asText(t.role), content: asText(t.content)})),
        answer: asText(it.answer),
        reference: isName(it.reference) ? it.reference : null,
      });
    });
    return items;
  }

  // The packet as the page uses it, or the list of what makes it unusable.
  function readPacket() {
    let raw;
    try {
      raw = JSON.parse(byId('packet').textContent);
    } catch (e) {
      return {problems: ['the packet in this page is not valid JSON']};
    }
    if (!isObject(raw)) return {problems: ['the packet in this page is not a JSON object']};
    const problems = [];
    if (raw.format !== 'stagegate-packet' || raw.version !== 1) problems.push('this is not a stagegate packet of version 1');
    if (!isName(raw.export_id)) problems.push('"export_id" must be a non-empty string');
    if (!isName(raw.reviewer)) problems.push('"reviewer" must be a non-empty string');
    const rubric = isObject(raw.rubric) ? raw.rubric : {};
    const criteria = readCriteria(rubric, problems);
    const items = readItems(raw.items, problems);
    if (problems.length) return {problems};
    return {
      exportId: raw.export_id, reviewer: raw.reviewer, title: asText(rubric.title),
      instructions: asText(raw.instructions), criteria, items,
    };
  }

  function showProblems(problems) {
    const main = byId('item');
    const box = element('section', 'card');
    box.append(element('h2', '', 'This review page cannot be used'));
    const list = element('ul');
    for (const p of problems) list.append(element('li', '', p));
    box.append(list, element('p', '', 'Please ask whoever sent it for a new one.'));
    main.replaceChildren(box);
  }

  const packet = readPacket();
  if (packet.problems) return showProblems(packet.problems);
  const {criteria, items} = packet;
  const criteriaById = new Map(criteria.map((c) => [c.id, c]));
  const itemIds = new Set(items.map((it) => it.id));
  const storageKey = 'stagegate-review/' + packet.exportId + '/' + packet.reviewer;
  const scores = new Map();   // item id -> Map(criterion id -> level)
  const givenAt = new Map();  // item id -> Map(criterion id -> the time its score was given)
  // The time a score is given: Date.now(), but always after every time this tab has given or
  // taken in, so a score given in the same millisecond as the one it replaces still wins over
  // that one when a save reads it back.
  let lastGiven = 0;
  function giveTime() {
    lastGiven = Math.max(Date.now(), lastGiven + 1);
    return lastGiven;
  }
  const seconds = new Map();  // item id -> seconds shown while the page was visible
  // Whether each answer could be sent: item id -> {value, at}, value one of USABILITY's; the
  // corrected text (item id -> {text, at}, set once the reviewer types); and the seconds the
  // correction box had the focus while the page was visible (a part of the item's seconds).
  const USABILITY = [['as_is', 'Usable as it is'], ['corrected', 'Usable after correction'],
                     ['unusable', 'Not usable']];
  const usability = new Map();
  const corrections = new Map();
  const correctionSeconds = new Map();
  let correcting = false;     // the correction box has the focus
  let index = 0;              // the item shown
  let current = 0;            // the criterion digit keys score
  let since = null;           // performance.now() at the start of the visible stretch being timed

  const scoresOf = (id) => scores.get(id) || new Map();
  const isComplete = (id) => scoresOf(id).size === criteria.length;
  const completeCount = () => items.filter((it) => isComplete(it.id)).length;

  function showNotice(text) {
    const notice = byId('notice');
    notice.textContent = text;
    notice.hidden = false;
  }

  // localStorage may be missing or throw (some browsers refuse it to file:// pages).
  function openStorage() {
    try {
      const storage = window.localStorage;
      storage.setItem(storageKey + '/probe', '1');
      storage.removeItem(storageKey + '/probe');
      return storage;
    } catch (e) {
      return null;
    }
  }
  const storage = openStorage();

  // What a save holds, read back: scores with the time each was given (Date.now(); 0 for a save
  // from before times were kept) and seconds. null when nothing is saved, 'unreadable' when it
  // does not parse.
  function readSaved(text) {
    if (text === null) return null;
    let saved;
    try {
      saved = JSON.parse(text);
    } catch (e) {
      return 'unreadable';
    }
    if (!isObject(saved) || !Array.isArray(saved.items)) return 'unreadable';
    const out = [];
    for (const entry of saved.items) {
      if (!isObject(entry) || !itemIds.has(entry.item)) continue;
      const given = [];
      for (const pair of Array.isArray(entry.scores) ? entry.scores : []) {
        const c = Array.isArray(pair) ? criteriaById.get(pair[0]) : undefined;
        if (!c || !c.levels.some((l) => l.level === pair[1])) continue;
        given.push({criterion: c.id, level: pair[1], at: Number.isFinite(pair[2]) ? pair[2] : 0});
      }
      const s = Number.isFinite(entry.seconds) && entry.seconds >= 0 ? entry.seconds : 0;
      out.push({item: entry.item, given, seconds: s, ...readSavedUsability(entry)});
    }
    return out;
  }

  // An entry's usability, corrected text (each [value, time given]) and correction seconds, each
  // left out when the save has none that is valid.
  function readSavedUsability(entry) {
    const out = {};
    const u = entry.usability;
    if (Array.isArray(u) && USABILITY.some(([value]) => value === u[0]) && Number.isFinite(u[1])) {
      out.usability = {value: u[0], at: u[1]};
    }
    const c = entry.corrected;
    if (Array.isArray(c) && typeof c[0] === 'string' && Number.isFinite(c[1])) out.corrected = {text: c[0], at: c[1]};
    const cs = entry.correction_seconds;
    out.correctionSeconds = Number.isFinite(cs) && cs >= 0 ? cs : 0;
    return out;
  }

  // Takes a saved usability and corrected text in when given later than the ones here; an item
  // keeps the larger correction time. Returns whether something here changed.
  function takeInUsability(entry) {
    let changed = false;
    for (const [saved, mine, same] of [[entry.usability, usability, (a, b) => a.value === b.value],
                                       [entry.corrected, corrections, (a, b) => a.text === b.text]]) {
      const here = mine.get(entry.item);
      if (!saved || (here && saved.at <= here.at)) continue;
      lastGiven = Math.max(lastGiven, saved.at);
      changed = changed || !here || !same(saved, here);
      mine.set(entry.item, saved);
    }
    correctionSeconds.set(entry.item, Math.max(entry.correctionSeconds || 0, correctionSeconds.get(entry.item) || 0));
    return changed;
  }

  // Takes a save in: a score given later than the one here replaces it, and an item keeps the
  // larger time. Scores are never taken away, so two tabs that save in any order both end with
  // every score either gave. Returns whether a score here changed.
  function takeIn(saved) {
    let changed = false;
    for (const entry of saved) {
      if (!scores.has(entry.item)) scores.set(entry.item, new Map());
      if (!givenAt.has(entry.item)) givenAt.set(entry.item, new Map());
      const mine = scores.get(entry.item);
      const times = givenAt.get(entry.item);
      for (const g of entry.given) {
        const here = times.has(g.criterion) ? times.get(g.criterion) : -1;
        if (g.at < here || (g.at === here && !(g.level > mine.get(g.criterion)))) continue;
        lastGiven = Math.max(lastGiven, g.at);
        changed = changed || mine.get(g.criterion) !== g.level;
        mine.set(g.criterion, g.level);
        times.set(g.criterion, g.at);
      }
      seconds.set(entry.item, Math.max(entry.seconds, seconds.get(entry.item) || 0));
      if (takeInUsability(entry)) changed = true;
    }
    return changed;
  }

  function restore() {
    let saved;
    try {
      saved = readSaved(storage.getItem(storageKey));
    } catch (e) {
      saved = 'unreadable';
    }
    if (saved === 'unreadable') {
      return showNotice('Progress saved earlier for this packet could not be read; starting afresh.');
    }
    if (saved) takeIn(saved);
  }

  function showOtherTab() {
    showNotice('This packet is open in another tab too: scores given there appear here. ' +
               'Score in one tab at a time.');
    if (document.querySelector('.criterion')) updateMarks();
  }

  // Adds the time since the last flush to the item shown, and goes on timing if it was.
  function flushClock() {
    if (since === null) return;
    const now = performance.now();
    const id = items[index].id;
    seconds.set(id, (seconds.get(id) || 0) + (now - since) / 1000);
    if (correcting) correctionSeconds.set(id, (correctionSeconds.get(id) || 0) + (now - since) / 1000);
    since = now;
  }
  function stopClock() {
    flushClock();
    since = null;
  }
  function startClock() {
    if (since === null && document.visibilityState === 'visible') since = performance.now();
  }

  const judged = (id) => scoresOf(id).size > 0 || usability.has(id) || corrections.has(id);

  let saveFailed = false;
  // Reads what is kept before writing over it: another tab's save that has not reached this one
  // yet (its storage event still queued) is taken in, not dropped. A tab that holds no judgement,
  // given or taken in, writes nothing: a document can open, and even save, before the browser
  // shows it what an earlier one kept, and its empty save would replace every score. Time on the
  // items is kept here and saved with the first judgement.
  function save() {
    flushClock();
    if (!storage) return;
    let changed = false;
    try {
      const saved = readSaved(storage.getItem(storageKey));
      if (Array.isArray(saved)) changed = takeIn(saved);
    } catch (e) {
      // Unreadable storage: what this tab holds is written below.
    }
    if (!items.some((it) => judged(it.id))) return;
    const entries = items.map((it) => {
      const times = givenAt.get(it.id) || new Map();
      const given = [...scoresOf(it.id)].map(([c, level]) => [c, level, times.get(c) || 0]);
      const entry = {item: it.id, scores: given, seconds: seconds.get(it.id) || 0,
                     correction_seconds: correctionSeconds.get(it.id) || 0};
      const u = usability.get(it.id);
      const c = corrections.get(it.id);
      if (u) entry.usability = [u.value, u.at];
      if (c) entry.corrected = [c.text, c.at];
      return entry;
    });
    try {
      storage.setItem(storageKey, JSON.stringify({version: 1, items: entries}));
    } catch (e) {
      if (!saveFailed) showNotice('Progress could not be saved in this browser: download your scores before you close the page.');
      saveFailed = true;
    }
    if (changed) showOtherTab();
  }

  function section(title, className) {
    const node = element('section', 'card ' + className);
    node.append(element('h2', '', title));
    return node;
  }

  // The digit key of a level is the level's own number, the one shown on its button (levels
  // above 9 have none: they are clicked).
  function levelButton(criterionIndex, level) {
    const button = element('button', 'level');
    button.type = 'button';
    button.setAttribute('aria-pressed', 'false');
    button.append(element('span', 'level-num', String(level.level)), element('span', 'anchor', level.anchor));
    if (level.level <= 9) button.setAttribute('aria-keyshortcuts', String(level.level));
    button.addEventListener('click', () => choose(criterionIndex, level.level));
    return button;
  }

  function criterionBox(c, ci) {
    const box = element('div', 'criterion');
    box.setAttribute('role', 'group');
    const question = element('p', 'question', (ci + 1) + '. ' + c.question);
    question.id = 'question-' + ci;
    if (c.hard) question.append(element('span', 'tag', 'hard'));
    box.setAttribute('aria-labelledby', question.id);
    const levels = element('div', 'levels');
    c.levels.forEach((l) => levels.append(levelButton(ci, l)));
    box.append(question, levels);
    return box;
  }

  function renderItem() {
    const item = items[index];
    const main = byId('item');
    main.replaceChildren();
    const conversation = section('Conversation', 'conversation');
    for (const turn of item.conversation) {
      const node = element('div', 'turn');
      node.append(element('div', 'role', turn.role), element('p', 'text', turn.content));
      conversation.append(node);
    }
    const answer = section('Answer to score', 'answer');
    answer.append(element('p', 'text', item.answer));
    main.append(conversation, answer);
    if (item.reference !== null) {
      const reference = section('Reference answer (for comparison; not the answer to score)', 'reference');
      reference.append(element('p', 'text', item.reference));
      main.append(reference);
    }
    const list = element('section', 'criteria');
    list.setAttribute('aria-label', 'Criteria');
    criteria.forEach((c, ci) => list.append(criterionBox(c, ci)));
    main.append(list, usabilityBox(item));
    updateMarks();
  }

  // Whether the answer could be sent: three choices and, for a correction, a box to write the
  // answer as the reviewer would send it (it starts as the answer). Its text goes only into the
  // download, through .value.
  function usabilityBox(item) {
    const box = section('Could this answer be sent?', 'usability');
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', 'Could this answer be sent?');
    box.append(element('p', 'hint', 'Say whether you would send this answer to the person who asked: ' +
                       'as it is, after you correct it, or not at all. To correct it, change the ' +
                       'answer in the box that appears until it is what you would send; the ' +
                       'correction counts once you have changed it, and the time you spend in ' +
                       'the box is recorded as correction time.'));
    const choices = element('div', 'choices');
    for (const [value, label] of USABILITY) {
      const button = element('button', 'choice', label);
      button.type = 'button';
      button.dataset.usability = value;
      button.setAttribute('aria-pressed', 'false');
      button.addEventListener('click', () => chooseUsability(value));
      choices.append(button);
    }
    const wrap = element('div', 'correction-wrap');
    wrap.id = 'correction-wrap';
    const label = element('label', 'correction-label', 'The answer as you would send it');
    label.htmlFor = 'correction';
    const area = element('textarea', 'correction');
    area.id = 'correction';
    area.rows = 8;
    area.value = corrections.has(item.id) ? corrections.get(item.id).text : item.answer;
    area.addEventListener('focus', () => {
      flushClock();
      correcting = true;
    });
    area.addEventListener('blur', () => {
      flushClock();
      correcting = false;
      save();
    });
    area.addEventListener('input', () => {
      corrections.set(item.id, {text: area.value, at: giveTime()});
      save();
      updateMarks();
    });
    wrap.append(label, area);
    box.append(choices, wrap);
    return box;
  }

  function chooseUsability(value) {
    usability.set(items[index].id, {value, at: giveTime()});
    save();
    updateMarks();
    if (value === 'corrected') byId('correction').focus();
  }

  // The usability choice shown, and the status it adds to an item's ('' when nothing is asked).
  function updateUsability(id) {
    const u = usability.get(id);
    document.querySelectorAll('button.choice').forEach((button) => {
      button.setAttribute('aria-pressed', String(u !== undefined && u.value === button.dataset.usability));
    });
    const wrap = byId('correction-wrap');
    if (wrap) wrap.hidden = !(u && u.value === 'corrected');
    if (!u) return '; is the answer usable?';
    if (u.value === 'corrected' && correctionOf(id) === undefined) return '; write your correction';
    return '';
  }

  function updateMarks() {
    const mine = scoresOf(items[index].id);
    document.querySelectorAll('.criterion').forEach((box, ci) => {
      const c = criteria[ci];
      box.classList.toggle('current', ci === current);
      if (ci === current) box.setAttribute('aria-current', 'step');
      else box.removeAttribute('aria-current');
      box.querySelectorAll('button.level').forEach((button, li) => {
        button.setAttribute('aria-pressed', String(mine.get(c.id) === c.levels[li].level));
      });
    });
    const done = completeCount();
    byId('position').textContent = 'Item ' + (index + 1) + ' of ' + items.length;
    byId('download').textContent = 'Download scores (' + done + ' of ' + items.length + ' complete)';
    byId('prev').disabled = index === 0;
    byId('next').disabled = index === items.length - 1;
    byId('status').textContent = (mine.size < criteria.length
      ? mine.size + ' of ' + criteria.length + ' criteria scored'
      : done === items.length ? 'All items complete' : 'Item complete') + updateUsability(items[index].id);
  }

  function choose(criterionIndex, level) {
    const id = items[index].id;
    if (!scores.has(id)) scores.set(id, new Map());
    scores.get(id).set(criteria[criterionIndex].id, level);
    if (!givenAt.has(id)) givenAt.set(id, new Map());
    givenAt.get(id).set(criteria[criterionIndex].id, giveTime());
    current = Math.min(criterionIndex + 1, criteria.length - 1);
    save();
    updateMarks();
  }

  // Shows item newIndex and saves, except when the page opens: a page that has been given nothing
  // yet has nothing to save, and a save then could write over progress that the browser has kept
  // but not yet shown this page (a reload can start before another page's save reaches it).
  function show(newIndex, opening) {
    if (newIndex < 0 || newIndex >= items.length) return;
    stopClock();
    correcting = false;  // the box is replaced; its blur may never come
    index = newIndex;
    const mine = scoresOf(items[index].id);
    const open = criteria.findIndex((c) => !mine.has(c.id));
    current = open < 0 ? 0 : open;
    renderItem();
    startClock();
    if (!opening) save();
    window.scrollTo(0, 0);
  }

  function markCurrent(newCurrent) {
    current = Math.max(0, Math.min(criteria.length - 1, newCurrent));
    updateMarks();
    const box = document.querySelectorAll('.criterion')[current];
    if (box) box.scrollIntoView({block: 'nearest'});
  }

  function scoreByKey(level) {
    const c = criteria[current];
    if (!c.levels.some((l) => l.level === level)) {
      byId('status').textContent = 'This criterion has no level ' + level + ': its levels are ' +
                                   c.levels.map((l) => l.level).join(', ');
      return;
    }
    choose(current, level);
    markCurrent(current);
  }

  function isTextField(node) {
    if (!(node instanceof Element)) return false;
    if (node.isContentEditable || node.tagName === 'TEXTAREA' || node.tagName === 'SELECT') return true;
    return node.tagName === 'INPUT' && !['button', 'checkbox', 'radio', 'submit', 'reset'].includes(node.type);
  }

  function onKey(event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (isTextField(event.target)) return;
    const key = event.key;
    if (/^[0-9]$/.test(key)) {
      if (!event.repeat) scoreByKey(Number(key));
    } else if (key === 'ArrowDown' || key === 'j') {
      markCurrent(current + 1);
    } else if (key === 'ArrowUp' || key === 'k') {
      markCurrent(current - 1);
    } else if (key === 'ArrowRight' || key === 'n') {
      show(index + 1);
    } else if (key === 'ArrowLeft' || key === 'p') {
      show(index - 1);
    } else {
      return;
    }
    event.preventDefault();
  }

  // A correction written for the item (not only spaces), or undefined.
  function correctionOf(id) {
    const c = corrections.get(id);
    return c && c.text.trim() !== '' ? c.text : undefined;
  }

  // The usability fields of an item's download line ('' when not judged): a correction's text and
  // seconds only with "corrected". "Usable after correction" with no correction written yet is
  // left out, as not judged: the import needs the text.
  function usabilityFields(id) {
    const u = usability.get(id);
    if (!u) return '';
    let out = ',"usability":' + JSON.stringify(u.value);
    if (u.value !== 'corrected') return out;
    const text = correctionOf(id);
    if (text === undefined) return '';
    out += ',"corrected_text":' + JSON.stringify(text);
    const spent = Math.round((correctionSeconds.get(id) || 0) * 10) / 10;
    return out + ',"correction_seconds":' + JSON.stringify(spent);
  }

  function download() {
    save();
    const header = {format: 'stagegate-scores', version: 1, export_id: packet.exportId, reviewer: packet.reviewer};
    const lines = [JSON.stringify(header)];
    for (const item of items) {
      if (!isComplete(item.id)) continue;
      const mine = scoresOf(item.id);
      // Written by hand to keep the criteria in rubric order: an object would put ids such as
      // "2" before "1".
      const pairs = criteria.map((c) => JSON.stringify(c.id) + ':' + JSON.stringify(mine.get(c.id)));
      const time = Math.round((seconds.get(item.id) || 0) * 10) / 10;
      lines.push('{"item":' + JSON.stringify(item.id) + ',"scores":{' + pairs.join(',') + '},"seconds":' +
                 JSON.stringify(time) + usabilityFields(item.id) + '}');
    }
    const blob = new Blob([lines.map((line) => line + '\n').join('')], {type: 'application/x-ndjson'});
    const safe = (text) => text.replace(/[^A-Za-z0-9._-]/g, '_');
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = 'scores-' + safe(packet.reviewer) + '-' + safe(packet.exportId) + '.jsonl';
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60000);
  }

  document.title = (packet.title || 'Review') + ' \u2014 ' + packet.reviewer;
  byId('title').textContent = packet.title || 'Review';
  byId('instructions').textContent = packet.instructions;
  if (!storage) {
    showNotice('This browser does not let the page keep your progress: scores will be lost if you ' +
               'reload or close it. Download them before you leave.');
  } else {
    restore();
  }
  for (const id of ['download', 'help', 'legend', 'bar']) byId(id).hidden = false;
  // The page's foot and what is scrolled into view clear the bar, however tall a notice makes it.
  const bar = byId('bar');
  const keepBarHeight = () => document.documentElement.style.setProperty('--bar', bar.offsetHeight + 'px');
  keepBarHeight();
  if (window.ResizeObserver) new ResizeObserver(keepBarHeight).observe(bar);
  byId('help').open = scores.size === 0;
  byId('prev').addEventListener('click', () => show(index - 1));
  byId('next').addEventListener('click', () => show(index + 1));
  byId('download').addEventListener('click', download);
  document.addEventListener('keydown', onKey);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') return startClock();
    stopClock();
    save();
  });
  window.addEventListener('pagehide', () => {
    stopClock();
    save();
  });
  window.addEventListener('pageshow', startClock);
  // The same packet open in another tab saves there as well. Those saves arrive here as they are
  // made, and every score is saved as it is given. A save here also takes in what is kept first,
  // so neither tab's save drops the other's scores, whichever order the saves and their events
  // come in. Time counts in the visible tab; an item keeps the larger.
  window.addEventListener('storage', (event) => {
    if (!storage || event.key !== storageKey || event.newValue === null) return;
    flushClock();
    const saved = readSaved(event.newValue);
    if (Array.isArray(saved)) takeIn(saved);
    showOtherTab();
  });
  setInterval(save, 5000);
  const unfinished = items.findIndex((it) => !isComplete(it.id));
  show(unfinished < 0 ? 0 : unfinished, true);
})();
)js";

}  // namespace stagegate::review
