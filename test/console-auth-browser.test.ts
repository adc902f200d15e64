// The console with API keys required (docs/guides/console.md), in real Chromium: without a key the page shows
// the key prompt and no data, asking nothing of the API; a key given once lasts the tab (a reload
// does not ask again) and goes as `Authorization: Bearer` on every request, event streams
// included, never in a URL; and a key sees only its own invocations, as the API shows them.
import type { Request } from 'playwright-core';
import t from 'tap';
import { hasChromium, openConsole } from './support/console-browser.js';
import { listen, startMesh } from './support/mesh.js';

const MINE = 'key-one';
const THEIRS = 'key-two';

if (!hasChromium()) {
  t.plan(0, '/usr/bin/chromium is absent (apt-get install chromium; in CI this test runs)');
} else {
  const mesh = await startMesh(t, {
    apiKeys: `${MINE},${THEIRS}`,
    headers: { authorization: `Bearer ${MINE}` },
    agentsYaml: '\n  echo: {instructions: "@agent echo"}\n',
    script: (r) => ({ final: `echo ${r.messages.at(-1)?.content}` }),
  });
  const mine = (await mesh.invoke('echo', { prompt: 'mine' })).json.id as string;
  const theirs = (
    await mesh.invoke('echo', { prompt: 'theirs' }, 'wait=30', { authorization: `Bearer ${THEIRS}` })
  ).json.id as string;
  const base = await listen(mesh);
  const ui = await openConsole(t, base);
  const { page } = ui;
  const sent: Request[] = [];
  page.on('request', (r) => sent.push(r));
  const apiRequests = () => sent.filter((r) => !new URL(r.url()).pathname.startsWith('/ui'));

  t.test('without a key the page asks for one and shows no data', async (t) => {
    await page.goto(`${base}/ui#/invocations`);
    await page.locator('[data-role="api-key"]').waitFor({ timeout: 30_000 });
    t.equal(await page.locator('[data-role="invocation-row"]').count(), 0, 'no invocation listed');
    t.equal(await page.locator('[data-role="filter-agent"]').count(), 0, 'no list at all');
    t.strictSame(
      apiRequests().map((r) => r.url()),
      [],
      'nothing asked of the API without a key',
    );
    await page.goto(`${base}/ui#/agents`);
    await page.locator('[data-role="api-key"]').waitFor();
    t.equal(await page.locator('[data-role="agent"]').count(), 0, 'no agent shown');
  });

  t.test("a key given with Enter lasts the tab and shows only that key's invocations", async (t) => {
    await page.goto(`${base}/ui#/invocations`);
    await page.locator('[data-role="api-key"]').fill(MINE);
    await page.locator('[data-role="api-key"]').press('Enter');
    await page
      .locator(`[data-role="invocation-row"][data-invocation-id="${mine}"]`)
      .waitFor({ timeout: 30_000 });
    t.equal(
      await page.locator(`[data-role="invocation-row"][data-invocation-id="${theirs}"]`).count(),
      0,
      "another key's invocation is not listed",
    );
    await page.reload();
    await page
      .locator(`[data-role="invocation-row"][data-invocation-id="${mine}"]`)
      .waitFor({ timeout: 30_000 });
    t.equal(await page.locator('[data-role="api-key"]').count(), 0, 'a reload does not ask again');
  });

  t.test('the key goes as a header on every request, the event stream included', async (t) => {
    await page.goto(`${base}/ui#/invocations/${mine}`);
    await page.waitForSelector(`[data-role="node"][data-invocation-id="${mine}"][data-status="succeeded"]`, {
      timeout: 30_000,
    });
    const api = apiRequests();
    t.ok(
      api.some((r) => r.url().endsWith(`/invocations/${mine}/events?deltas=true`)),
      'the tree followed its event stream',
    );
    for (const r of api) {
      t.equal(r.headers().authorization, `Bearer ${MINE}`, `${r.method()} ${new URL(r.url()).pathname}`);
      t.notMatch(r.url(), MINE, 'never in the URL');
    }
    t.strictSame(ui.errors, [], 'no console error');
    t.strictSame(ui.outside, [], 'nothing outside the origin');
  });

  t.test("another key's invocation is not shown, and a refused key is asked again", async (t) => {
    await page.goto(`${base}/ui#/invocations/${theirs}`);
    await page.getByText('No invocation').waitFor({ timeout: 30_000 });
    t.equal(await page.locator('[data-role="node"]').count(), 0, 'no node of it');
    await page.getByRole('button', { name: 'Forget key' }).click();
    await page.locator('[data-role="api-key"]').fill('not-a-key');
    await page.locator('[data-role="api-key"]').press('Enter');
    await page.getByText('The key was refused').waitFor({ timeout: 30_000 });
    t.equal(await page.locator('[data-role="api-key"]').count(), 1, 'asked again');
    t.equal(
      await page.evaluate(() => (globalThis as any).sessionStorage.length),
      0,
      'the refused key is not kept',
    );
  });
}
