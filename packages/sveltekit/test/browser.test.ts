// Debian's chromium (headless, playwright-core) on the Kit 3 build: the /live page hydrates
// and connects through @tachyon/sveltekit/client, a button runs a form action that calls
// platform.publish, and a second page sees the event live; the /helpers page shows the
// client helpers (latest, count, crud, lookup, once, presence) following server events.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchChromium } from './helpers/chromium.ts';
import { buildFixture, startServer, type Running } from './helpers/fixture.ts';

describe('in a real browser (chromium)', { timeout: 300_000 }, () => {
  let server: Running;
  let browser: import('playwright-core').Browser;

  before(async () => {
    server = await startServer(buildFixture('kit3'));
    browser = await launchChromium();
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

  it('the client helpers: latest, count, crud (loaded, then created/updated/deleted), lookup, once, presence', async () => {
    const errors: string[] = [];
    const open = async (id: string) => {
      const page = await browser.newPage();
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${server.url}/helpers?id=${id}`);
      await page.locator('#status', { hasText: 'open' }).waitFor({ timeout: 10_000 });
      return page;
    };
    const text = (page: import('playwright-core').Page, id: string, want: string) =>
      page.locator(id, { hasText: new RegExp(`^${want}$`) }).waitFor({ timeout: 5_000 });
    const publish = async (topic: string, event: string, data: unknown) => {
      const q = new URLSearchParams({ op: 'publish', topic, event, data: JSON.stringify(data) });
      assert.deepEqual(await (await fetch(`${server.url}/api/platform?${q}`)).json(), { delivered: true });
    };
    const a = await open('ann');
    const b = await open('bob');
    // presence: each page is a member; the list arrives, then joins keep it current.
    await text(a, '#here', 'ann,bob');
    await text(b, '#here', 'ann,bob');
    // crud: the initial load (a function: fetch), then the events.
    await text(a, '#loading', 'loaded');
    assert.deepEqual(await a.locator('#todos li').allTextContents(), ['1:one', '2:two']);
    assert.equal(await a.locator('#headline').textContent(), 'none yet');
    assert.equal(await a.locator('#first').textContent(), 'one');

    await publish('board', 'headline', 'extra, extra');
    await publish('board', 'set', 5);
    await publish('board', 'increment', null);
    await publish('board', 'increment', 3);
    await publish('board', 'decrement', null);
    await publish('board', 'increment', 'not a number'); // a step that is not a number counts as 1
    for (const page of [a, b]) {
      await text(page, '#headline', 'extra, extra');
      await text(page, '#visits', '9');
    }
    await publish('todos', 'created', { id: 3, text: 'three' });
    await publish('todos', 'updated', { id: 1, text: 'uno' });
    await publish('todos', 'deleted', 2);
    await publish('todos', 'deleted', { id: 99 }); // unknown: nothing changes
    await publish('todos', 'created', 'not an item'); // ignored
    for (const page of [a, b]) {
      await page.locator('#todos li', { hasText: '3:three' }).waitFor({ timeout: 5_000 });
      await text(page, '#first', 'uno');
      assert.deepEqual(await page.locator('#todos li').allTextContents(), ['1:uno', '3:three']);
    }
    await publish('todos', 'deleted', { id: 1 });
    await text(a, '#first', 'gone');

    // once: the next alert only.
    await a.click('#arm');
    await text(a, '#alert', 'armed');
    await publish('board', 'headline', 'not an alert');
    await text(a, '#headline', 'not an alert');
    assert.equal(await a.locator('#alert').textContent(), 'armed');
    await publish('board', 'alert', 'fire');
    await text(a, '#alert', 'fire');
    await publish('board', 'alert', 'again');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await a.locator('#alert').textContent(), 'fire');

    // A page that leaves is a member no more.
    await b.close();
    await text(a, '#here', 'ann');
    await a.close();
    assert.deepEqual(errors, []);
  });

  it('the helpers render their initial values on the server, without connecting', async () => {
    const html = await (await fetch(server.url + '/helpers?id=ssr')).text();
    assert.match(html, /<p id="status">closed<\/p>/);
    assert.match(html, /<p id="headline">none yet<\/p>/);
    assert.match(html, /<p id="visits">0<\/p>/);
    assert.match(html, /<p id="first">one<\/p>/);
    assert.match(html, /<p id="here"><\/p>/);
  });

  it('the server-rendered HTML of the live page carries the SSR-safe initial state', async () => {
    const html = await (await fetch(server.url + '/live')).text();
    assert.match(html, /<p id="status">closed<\/p>/);
    assert.match(html, /nothing yet/);
  });
});
