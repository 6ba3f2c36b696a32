/**
 * What the site's browser tests share (Chromium itself comes from chromium.ts): a loopback
 * static server (gzip when the browser asks, as any static host does), and a page visit that
 * collects console errors, page errors and failed requests.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import type { BrowserContext, Page } from 'playwright-core';
import { Slots } from '../../scripts/notebooks/slots';


const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.ipynb': 'application/x-ipynb+json',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
};

/** A static file server on 127.0.0.1 for `dir`; returns its base URL and a close function. */
export async function serve(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const file = path.join(dir, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    if (!file.startsWith(dir) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    const headers: Record<string, string> = { 'content-type': type, 'cache-control': 'max-age=3600' };
    if (/gzip/.test(String(req.headers['accept-encoding'] ?? '')) && /text|javascript|json/.test(type)) {
      res.writeHead(200, { ...headers, 'content-encoding': 'gzip' });
      fs.createReadStream(file).pipe(zlib.createGzip()).pipe(res);
    } else {
      res.writeHead(200, headers);
      fs.createReadStream(file).pipe(res);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Opens `url` and collects every console error, page error and failed request from then on. */
export async function open(context: BrowserContext, url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  await page.goto(url, { waitUntil: 'load' });
  return { page, problems };
}

/** Runs axe-core on the page; returns one line per violation (rule, impact, first targets). */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: require.resolve('axe-core') });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'], preload: false });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, count: v.nodes.length, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  return violations.map((v) => `${v.id} (${v.impact}, ${v.count}×): ${v.targets.join(' | ')}`);
}

/**
 * Pages open at once in the site's loops over every page: each page has its own renderer
 * process, and pages that are laid out, drawn and checked by axe-core one after the other kept
 * one of CI's two cores idle (test:browser: 342 s of wall time, 148 s of CPU).
 */
export const PAGES_AT_ONCE = 2;

/**
 * Runs `check` on every item, at most `atOnce` at a time, and fails with the first error once
 * the checks already started have settled (so no page is left half-checked behind the failure).
 */
export async function checkEach<T>(items: readonly T[], check: (item: T) => Promise<void>, atOnce = PAGES_AT_ONCE): Promise<void> {
  const slots = new Slots(Math.max(1, atOnce));
  const errors: unknown[] = [];
  await Promise.all(
    items.map((item) =>
      slots.run(1, async () => {
        if (errors.length > 0) return;
        try {
          await check(item);
        } catch (e) {
          errors.push(e);
        }
      }),
    ),
  );
  if (errors.length > 0) throw errors[0];
}
