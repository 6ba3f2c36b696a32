/**
 * Debian's Chromium for every browser test, launched with the flags the brief names, and every
 * page under one ceiling. Playwright gives each wait (a navigation, a selector, a function, a
 * click) 30 s unless told otherwise; a loaded 2-core CI machine took longer than that to load a
 * classic Notebook page (run G, 2026-12-04), and the test failed for nothing. So every browser and
 * page the tests open comes from here, with HANG_MS as the default: a ceiling for a hang, not a
 * speed assertion. test/project/waits.test.ts holds the rule.
 */
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type LaunchOptions, type Page } from 'playwright-core';
import { HANG_MS } from './ceilings';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'];

/** What {@link launchBrowser} takes besides Playwright's own launch options. */
export interface BrowserArgs {
  /** WebGL through SwiftShader instead of `--disable-gpu`, which leaves no WebGL context at all. Default false. */
  webgl?: boolean;
  /** WebGPU as well, from SwiftShader's Vulkan: Chromium on Linux offers no adapter without `--enable-unsafe-webgpu`. Implies `webgl`. Default false. */
  webgpu?: boolean;
}

/** The brief's flags, with a software GPU in place of `--disable-gpu` when asked for. */
export function chromiumFlags(args: BrowserArgs = {}): string[] {
  if (!args.webgl && !args.webgpu) return CHROMIUM_FLAGS;
  const gpu = ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', ...(args.webgpu ? ['--enable-unsafe-webgpu'] : [])];
  return CHROMIUM_FLAGS.flatMap((f) => (f === '--disable-gpu' ? gpu : [f]));
}

/** Chromium with the brief's flags. Open its pages with {@link newPage}. */
export function launchBrowser(args: BrowserArgs = {}, options: LaunchOptions = {}): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, ...options, args: [...chromiumFlags(args), ...(options.args ?? [])] });
}

/** A page in a context of its own, every wait of which defaults to HANG_MS. */
export async function newPage(browser: Browser, options: BrowserContextOptions = {}): Promise<Page> {
  const page = await browser.newPage(options);
  page.context().setDefaultTimeout(HANG_MS);
  return page;
}

/** Chromium with a fresh profile in `profileDir`; every wait of its pages defaults to HANG_MS. */
export async function launchPersistent(profileDir: string, options: BrowserContextOptions & { args?: string[] } = {}): Promise<BrowserContext> {
  const { args = [], ...rest } = options;
  const context = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_FLAGS, ...args], ...rest });
  context.setDefaultTimeout(HANG_MS);
  return context;
}
