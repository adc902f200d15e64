// The Swagger UI in a real browser (issue 9): Debian's Chromium, driven by playwright-core with the
// system executable (never a downloaded browser), opens /docs, shows the mesh by its name, renders
// the document without errors, lists every agent's invoke operation, and runs one with "Try it out".
import fs from 'node:fs';
import { chromium } from 'playwright-core';
import t from 'tap';
import { AGENTS, openapiMesh } from './fixtures/openapi-client/openapi-mesh.js';
import { listen, startMesh } from './support/mesh.js';

const CHROMIUM = '/usr/bin/chromium';

if (!fs.existsSync(CHROMIUM) && !process.env.CI) {
  t.plan(
    0,
    `${CHROMIUM} is absent (apt-get install chromium; .ci/run installs it, and in CI this test runs)`,
  );
} else {
  const mesh = await startMesh(t, openapiMesh);
  const base = await listen(mesh);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${base}/docs`);
  await page.waitForSelector('.opblock', { timeout: 60_000 });

  t.test("the top bar shows the mesh's name and the document renders without errors", async (t) => {
    const logo = await page.getAttribute('.topbar-wrapper img', 'src');
    const svg = Buffer.from(/base64,(.*)$/.exec(logo ?? '')?.[1] ?? '', 'base64').toString();
    t.match(svg, />agentmesh<\/text>/);
    t.match(await page.textContent('.info .title'), /agentmesh/);
    t.equal(await page.locator('.errors-wrapper').count(), 0, 'Swagger UI reports no error in the document');
    t.strictSame(pageErrors, [], 'no script error');
  });

  t.test("every agent's invoke operation is listed", async (t) => {
    for (const agent of AGENTS) {
      const op = page.locator(`#operations-agents-invoke_${agent}`);
      t.equal(await op.count(), 1, `invoke_${agent} is shown`);
      t.match(await op.locator('.opblock-summary-path').textContent(), `/agents/${agent}/invoke`);
    }
  });

  t.test('"Try it out" invokes an agent from the page', async (t) => {
    const op = page.locator('#operations-agents-invoke_echo');
    await op.locator('.opblock-summary').click();
    await op.locator('button.try-out__btn').click();
    await op.locator('button.execute').click();
    const status = op.locator('.live-responses-table tr.response .response-col_status').first();
    await status.waitFor({ timeout: 60_000 });
    t.equal((await status.textContent())?.trim(), '200');
    t.match(
      await op.locator('.live-responses-table tr.response .response-col_description').first().textContent(),
      /hello/,
    );
  });
}
