// Drives the console (/ui, docs/guides/console.md) in Debian's Chromium with playwright-core: the browser is the
// system's (never a downloaded one); every request the page makes is checked to stay on the
// gateway's origin, and every console message of type error is kept, for the tests to assert on.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Test } from 'tap';

export const CHROMIUM = '/usr/bin/chromium';
const ROOT = path.resolve(import.meta.dirname, '../..');
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** True when this machine can run browser tests (in CI it must: the test then fails without it). */
export const hasChromium = (): boolean => fs.existsSync(CHROMIUM) || process.env.CI !== undefined;

/** A page on the console, and what it did: requests leaving the origin, console errors. */
export interface ConsolePage {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** URLs the page asked for outside the gateway's origin (each refused). */
  outside: string[];
  /** Every URL the page asked for on the origin, in order. */
  requests: string[];
  /** Console messages of type error, and uncaught page errors. */
  errors: string[];
  /** Saves a screenshot: into docs/images with UPDATE_SCREENSHOTS=1, else into a temporary directory. */
  screenshot(name: string, opts?: { fullPage?: boolean }): Promise<string>;
}

/** Builds the console if stale, launches Chromium, and opens a page whose requests are watched. */
export async function openConsole(t: Test, base: string): Promise<ConsolePage> {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-console.mjs')], { stdio: 'inherit' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 820 } });
  const origin = new URL(base).origin;
  const outside: string[] = [];
  const requests: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin !== origin) {
      outside.push(url);
      return route.abort();
    }
    requests.push(url);
    return route.continue();
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  const shots = process.env.UPDATE_SCREENSHOTS
    ? path.join(ROOT, 'docs/images')
    : fs.mkdtempSync(path.join(os.tmpdir(), 'console-shots-'));
  fs.mkdirSync(shots, { recursive: true });
  return {
    browser,
    context,
    page,
    outside,
    requests,
    errors,
    async screenshot(name, opts = {}) {
      const file = path.join(shots, `${name}.png`);
      await page.screenshot({ path: file, fullPage: opts.fullPage ?? false });
      return file;
    },
  };
}

/** The nodes of the tree on the page: for each, its nearest enclosing node, attributes and own output. */
export function treeOf(page: Page): Promise<
  {
    id: string;
    agent: string;
    status: string;
    parentCallId: string | null;
    enclosing: string | null;
    output: string | null;
    calls: { callId: string; kind: string; attempt: string | null }[];
  }[]
> {
  // Runs in the page (the repo's TypeScript has no DOM types: the page's globals are reached untyped).
  return page.evaluate(() => {
    const doc = (globalThis as any).document;
    const nearestNode = (el: any) => el.parentElement?.closest('[data-role="node"]') ?? null;
    return [...doc.querySelectorAll('[data-role="node"]')].map((n: any) => {
      const own = (sel: string): any[] =>
        [...n.querySelectorAll(sel)].filter((x: any) => x.closest('[data-role="node"]') === n);
      const output = own('[data-role="output"]')[0];
      return {
        id: n.getAttribute('data-invocation-id')!,
        agent: n.getAttribute('data-agent')!,
        status: n.getAttribute('data-status')!,
        parentCallId: n.getAttribute('data-parent-call-id'),
        enclosing: nearestNode(n)?.getAttribute('data-invocation-id') ?? null,
        output: output ? output.textContent : null,
        calls: own('[data-call-id]').map((c) => ({
          callId: c.getAttribute('data-call-id')!,
          kind: c.getAttribute('data-kind')!,
          attempt: c.getAttribute('data-attempt'),
        })),
      };
    });
  });
}
