// The page in a real browser: Debian's chromium (installed with apt-get when missing) driven by
// playwright-core. It loads from the app alone under its strict CSP with no error, its numbers
// and charts move under load, a stranger gets 403, and the disconnect button closes a socket.
// TACHYON_DASHBOARD_SCREENSHOT=docs/dashboard.png writes the screenshot docs/dashboard.md shows.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { ensureChromium } from '../../../scripts/chromium.ts';
import { client, startApp } from './helpers.ts';

let browser: Browser;
before(async () => {
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: ensureChromium(), args: ['--no-sandbox'] });
});
after(() => browser?.close());

const auth = (req: { cookies: Record<string, string> }) => req.cookies.operator === 'let-me-in';

test('the page loads from the app alone, its numbers and charts move under load, a stranger is refused', { timeout: 60_000 }, async () => {
  const s = await startApp({ auth, actions: true, interval: 500 }, '0.0.0.0');
  const stranger = await browser.newContext();
  const operator = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await operator.addCookies([{ name: 'operator', value: 'let-me-in', url: s.base }]);
  try {
    // A stranger: 403 on the page, and a WebSocket opened from the app's origin is refused too.
    const spy = await stranger.newPage();
    const refused = await spy.goto(`${s.base}/_tachyon`);
    assert.equal(refused?.status(), 403);
    await spy.goto(`${s.base}/hello`);
    const opened = await spy.evaluate(
      (url) =>
        new Promise<string>((resolve) => {
          const ws = new WebSocket(url);
          ws.onopen = () => resolve('open');
          ws.onerror = () => resolve('refused');
        }),
      `${s.ws}/_tachyon/ws`,
    );
    assert.equal(opened, 'refused');

    const page = await operator.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => void requests.push(r.url()));
    page.on('pageerror', (e) => void problems.push(e.message));
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text())); // CSP violations land here
    await page.goto(`${s.base}/_tachyon`);
    await page.waitForSelector('#status.badge:not(.off)', { timeout: 10_000 });

    // Load: HTTP requests on two routes, and a user socket on a presence topic sending events.
    const user = await client(`${s.ws}/live?user=ann`);
    user.ws.send(JSON.stringify({ type: 'subscribe', topic: 'room:lobby', ref: 1 }));
    await user.next((m) => m.type === 'subscribed');
    let loading = true;
    const load = (async () => {
      let i = 0;
      while (loading) {
        await (await fetch(`${s.base}/users/${i++ % 50}`)).text();
        await (await fetch(`${s.base}/hello`)).text();
        user.ws.send(JSON.stringify({ type: 'event', event: 'ping', ref: i + 1 }));
        if (i % 20 === 0) s.app.publish('room:lobby', 'news', i);
      }
    })();
    try {
      await page.waitForFunction(() => Number(document.getElementById('rps')?.textContent?.replace(/,/g, '')) > 0, undefined, {
        timeout: 15_000,
      });
      await page.waitForFunction(() => Number(document.body.dataset.updates) >= 4, undefined, { timeout: 15_000 });
      const routes = await page.locator('#routes tbody td:first-child').allTextContents();
      assert.ok(routes.includes('GET /users/:id') && routes.includes('GET /hello'), routes.join(', '));
      const room = await page.locator('#topics tbody tr', { hasText: 'room:lobby' }).locator('td').allTextContents();
      assert.deepEqual(room.slice(0, 3), ['room:lobby', '1', '1']);
      assert.ok(Number(room[3]) > 0, `history kept: ${room[3]}`);
      assert.ok(Number((await page.locator('#ws-in').textContent())?.replace(/,/g, '')) > 0);
      assert.equal(await page.locator('#workers tbody tr').count(), 1);
      assert.equal(await page.locator('.uplot canvas').count(), 3);
      const shot = process.env.TACHYON_DASHBOARD_SCREENSHOT;
      if (shot) {
        // A few more seconds of load, for charts worth looking at.
        await page.waitForFunction(() => Number(document.body.dataset.updates) >= 16, undefined, { timeout: 30_000 });
        await page.screenshot({ path: shot, fullPage: true });
      }
    } finally {
      loading = false;
      await load;
    }

    // The disconnect action, from the button in the sockets table.
    const id = [...s.app.sockets()].find((x) => (x.data as { id?: string }).id === 'ann')!.id;
    await page
      .locator('#sockets tbody tr', { has: page.locator(`td:nth-child(2):text-is("${id}")`) })
      .locator('button')
      .click();
    assert.equal((await user.closed).code, 1008);
    await page.waitForFunction(() => document.getElementById('notice')?.textContent === 'socket disconnected', undefined, {
      timeout: 5000,
    });

    const outside = requests.filter((u) => !u.startsWith(`${s.base}/`) && !u.startsWith(`${s.ws}/`));
    assert.deepEqual(outside, [], 'no request leaves the app');
    assert.deepEqual(problems, []);
  } finally {
    await stranger.close();
    await operator.close();
    await s.close();
  }
});
