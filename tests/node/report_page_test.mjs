// The release report in headless Chromium (Debian's chromium, driven by puppeteer-core):
//   node tests/node/report_page_test.mjs REPORT.html SCREENSHOT.png EXPECTED_CHARTS
// Opens the report from a file:// URL with the network cut off; fails on any console error, page
// error or request that is not for the file itself or a data: URL; checks the verdict and the
// three conditions are shown; and, from a screenshot of each chart, that every chart drew
// something (more than a few non-background pixels in its plot). Exits non-zero on failure.
import fs from 'node:fs';
import {pathToFileURL} from 'node:url';
import puppeteer from 'puppeteer-core';

const [reportArg, shotArg, chartsArg] = process.argv.slice(2);
if (!reportArg || !shotArg || !chartsArg) {
  console.error('usage: node report_page_test.mjs REPORT.html SCREENSHOT.png EXPECTED_CHARTS');
  process.exit(2);
}
const failures = [];
const check = (ok, message) => {
  if (!ok) failures.push(message);
};

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
try {
  const page = await browser.newPage();
  await page.setViewport({width: 1000, height: 900});
  await page.setOfflineMode(true);
  page.on('console', (m) => {
    if (m.type() === 'error') failures.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => failures.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith('file:') && !url.startsWith('data:')) failures.push(`request left the file: ${url}`);
  });
  await page.goto(pathToFileURL(reportArg).href, {waitUntil: 'load'});

  const text = await page.evaluate(() => document.body.innerText);
  check(/Verdict: (ready|not ready|pending)/.test(text), 'no verdict shown');
  for (const title of ['Condition 1: responsiveness', 'Condition 2: quality', 'Condition 3: recoverability'])
    check(text.includes(title), `no section "${title}"`);
  check(await page.evaluate(() => document.querySelectorAll('script').length) === 0, 'the report has a script');

  const charts = await page.$$('figure svg');
  check(charts.length === Number(chartsArg), `${charts.length} charts, expected ${chartsArg}`);
  for (let i = 0; i < charts.length; ++i) {
    const box = await charts[i].boundingBox();
    check(box && box.width > 200 && box.height > 100, `chart ${i + 1} is not laid out: ${JSON.stringify(box)}`);
    // Count the pixels of the screenshot that are neither white nor the light grid grey: the
    // lines, bars, axes and labels a chart draws.
    const png = await charts[i].screenshot({encoding: 'base64'});
    const inked = await page.evaluate(async (data) => {
      const image = new Image();
      image.src = 'data:image/png;base64,' + data;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const context = canvas.getContext('2d');
      context.drawImage(image, 0, 0);
      const pixels = context.getImageData(0, 0, image.width, image.height).data;
      let count = 0;
      for (let p = 0; p < pixels.length; p += 4)
        if (pixels[p] < 200 || pixels[p + 1] < 200 || pixels[p + 2] < 200) ++count;
      return {count, total: pixels.length / 4};
    }, png);
    const title = await charts[i].$eval('title', (t) => t.textContent).catch(() => '(untitled)');
    check(inked.count > 0.01 * inked.total,
          `chart ${i + 1} (${title}) drew almost nothing: ${inked.count} of ${inked.total} pixels`);
  }
  await page.setViewport({width: 1000, height: 900});
  await page.screenshot({path: shotArg, fullPage: true});
  check(fs.statSync(shotArg).size > 20000, 'the screenshot is nearly empty');
} finally {
  await browser.close();
}
if (failures.length) {
  console.error('report page test: FAILED: ' + failures.join('\n  '));
  process.exit(1);
}
console.log(`report page test: ok (${chartsArg} charts drawn, no console error, no request left the file)`);
