import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runLighthouse, startChromium, type LighthouseResult } from '../helpers/lighthouse';
import { serve } from '../helpers/site';

// Lighthouse's mobile preset on every page of the exported site, served from loopback (gzip, as
// any static host serves it): performance ≥ 90, accessibility, best practices and SEO 100.
// Lighthouse refuses file:// URLs (runtime error INVALID_URL), so file:// is covered by
// site.e2e.ts and browser.e2e.ts instead.
// The scores of the run are written to build/lighthouse.json (docs/site.md quotes one run).
const ROOT = path.resolve(__dirname, '..', '..');
const SITE = path.resolve(process.env.SITE_DIR ?? path.join(ROOT, 'build', 'site'));
const MINIMUM = { performance: 90, accessibility: 100, 'best-practices': 100, seo: 100 };

let tmp: string;
let chromium: { port: number; stop: () => Promise<void> };
let http: { url: string; close: () => Promise<void> };
const pages = fs.existsSync(SITE) ? fs.readdirSync(SITE).filter((f) => f.endsWith('.html')).sort() : [];
// Two pages of the Chinese edition (same frame and scripts as the English pages; site.e2e.ts runs
// axe on all of them): its index and the chapter with math and charts.
for (const zh of ['zh/index.html', 'zh/03-accumulation.html']) if (fs.existsSync(path.join(SITE, zh))) pages.push(zh);
const results: LighthouseResult[] = [];

before(async () => {
  assert.ok(pages.includes('index.html'), `no site in ${path.relative(ROOT, SITE)}; run \`npm run notebooks && npm run site\` first`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lighthouse-e2e-'));
  http = await serve(SITE);
  chromium = await startChromium(path.join(tmp, 'profile'));
  // A fresh Chromium's first page pays for its start-up in blocking time; warm it up unscored.
  await runLighthouse(new URL('index.html', http.url).href, chromium.port);
});
after(async () => {
  await chromium?.stop();
  await http?.close();
  if (results.length) fs.writeFileSync(path.join(ROOT, 'build', 'lighthouse.json'), `${JSON.stringify(results, null, 2)}\n`);
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('Lighthouse, mobile preset, on every page', () => {
  for (const name of pages) {
    it(`${name}: performance ≥ 90, accessibility, best practices and SEO 100`, async () => {
      const r = await runLighthouse(new URL(name, http.url).href, chromium.port);
      results.push({ ...r, url: name });
      const below = Object.entries(MINIMUM).filter(([c, min]) => r.scores[c as keyof typeof MINIMUM] < min);
      assert.deepEqual(below, [], `${name}: ${JSON.stringify(r.scores)}; audits losing points: ${r.failing.join('; ')}`);
    });
  }
});
