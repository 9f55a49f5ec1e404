// The drain button in Chromium, on a real cluster of 2 workers (cluster-server.ts in its own
// process): the operator drains the worker the page is not on; a client of that worker gets
// 1012 and reconnects to the other one; the page says the worker was replaced and shows both.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { ensureChromium } from '../../../scripts/chromium.ts';
import { connect, type Live } from '../../client/src/index.ts';
import { startClusterProcess } from './helpers.ts';

let browser: Browser;
let proc: ChildProcess;
let port = 0;
before(async () => {
  const { chromium } = await import('playwright-core');
  [browser, { proc, port }] = await Promise.all([
    chromium.launch({ executablePath: ensureChromium(), args: ['--no-sandbox'] }),
    startClusterProcess(),
  ]);
});
after(async () => {
  proc?.kill('SIGTERM');
  await browser?.close();
});

test('the drain button restarts a worker: its client reconnects to the other, the page shows it replaced', {
  timeout: 60_000,
}, async () => {
  const base = `http://127.0.0.1:${port}`;
  const operator = await browser.newContext();
  await operator.addCookies([{ name: 'operator', value: 'let-me-in', url: base }]);
  const users: Live[] = [];
  try {
    const page = await operator.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => void problems.push(e.message));
    await page.goto(`${base}/_tachyon`);
    await page.waitForFunction(() => document.querySelectorAll('#workers tbody tr').length === 2, undefined, { timeout: 15_000 });
    // The worker the page's own socket is on, from the sockets table; the other one is drained.
    const pageRow = page.locator('#sockets tbody tr', { hasText: 'a dashboard' });
    await pageRow.waitFor({ timeout: 10_000 });
    const pageWorker = Number(await pageRow.locator('td').first().textContent());
    const target = pageWorker === 1 ? 2 : 1;
    // A reconnecting client on the worker to drain (connections are dealt round-robin).
    let user: Live | undefined;
    const codes: number[] = [];
    for (let i = 0; i < 12 && user === undefined; i++) {
      const live = connect(`ws://127.0.0.1:${port}/live`, { minDelay: 10, maxDelay: 50 });
      users.push(live);
      if ((await live.request('who')) === target) user = live;
    }
    assert.ok(user, `a client on worker ${target}`);
    user.onStatus((status, info) => status === 'reconnecting' && info.code !== undefined && codes.push(info.code));

    await page
      .locator('#workers tbody tr', { has: page.locator(`td:first-child:text-is("${target}")`) })
      .locator('button')
      .click();
    await page.waitForFunction((w) => document.getElementById('notice')?.textContent === `worker ${w} drained and replaced`, target, {
      timeout: 20_000,
    });
    assert.deepEqual(codes, [1012], 'the drained worker closed its client with 1012 (service restart)');
    assert.equal(await user.request('who'), pageWorker, 'the client reconnected to the other worker');
    // Both workers show again (the fresh one answers the page's snapshots).
    await page.waitForFunction(
      () =>
        document.querySelectorAll('#workers tbody tr').length === 2 &&
        !/not answering/.test(document.getElementById('cluster')?.textContent ?? ''),
      undefined,
      {
        timeout: 10_000,
      },
    );
    assert.deepEqual(problems, []);
  } finally {
    for (const u of users) u.close();
    await operator.close();
  }
});
