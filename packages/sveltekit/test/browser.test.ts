// Debian's chromium (headless, playwright-core) on the Kit 3 build: the /live page hydrates
// and connects through @tachyon/sveltekit/client, a button runs a form action that calls
// platform.publish, and a second page sees the event live.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ensureChromium, playwright } from './helpers/chromium.ts';
import { buildFixture, startServer, type Running } from './helpers/fixture.ts';

describe('in a real browser (chromium)', { timeout: 300_000 }, () => {
  let server: Running;
  let browser: import('playwright-core').Browser;

  before(async () => {
    const executablePath = ensureChromium();
    server = await startServer(buildFixture('kit3'));
    browser = await playwright().chromium.launch({
      executablePath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('hydrates, publishes from an action, and a second page sees it live', async () => {
    const errors: string[] = [];
    const open = async () => {
      const page = await browser.newPage();
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(server.url + '/live');
      return page;
    };
    const a = await open();
    const b = await open();
    // SSR renders 'closed' (nothing connects on the server); after hydration the client connects.
    await a.locator('#status', { hasText: 'open' }).waitFor({ timeout: 10_000 });
    await b.locator('#status', { hasText: 'open' }).waitFor({ timeout: 10_000 });
    assert.equal(await b.locator('#latest').textContent(), 'nothing yet');

    await a.fill('input[name="text"]', 'hello from page A');
    await a.click('#publish');
    await b.locator('#latest', { hasText: 'note: hello from page A' }).waitFor({ timeout: 5_000 });
    await a.locator('#latest', { hasText: 'note: hello from page A' }).waitFor({ timeout: 5_000 });
    // The action ran without a full page load (use:enhance): page B was never reloaded.
    await a.fill('input[name="text"]', 'second');
    await a.click('#publish');
    await b.locator('#events li').nth(1).waitFor({ timeout: 5_000 });
    assert.equal(await b.locator('#events li').count(), 2);
    assert.deepEqual(errors, []);
  });

  it('the server-rendered HTML of the live page carries the SSR-safe initial state', async () => {
    const html = await (await fetch(server.url + '/live')).text();
    assert.match(html, /<p id="status">closed<\/p>/);
    assert.match(html, /nothing yet/);
  });
});
