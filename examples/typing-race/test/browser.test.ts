// The pages in a real browser: Debian's chromium (installed with apt-get when missing) driven
// by playwright-core, on the production server (server.ts: the game's Tachyon App with the
// built SvelteKit app installed). Two players in two browser contexts (two guest cookies)
// match, count down, race to the end typing the passage (a typo and its backspace included),
// each seeing the other's caret move, and both get the results; "race again" finds a new room.
// With SCREENSHOTS=1 it also writes the README's screenshots to docs/.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { ensureChromium } from '../../../scripts/chromium.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DOCS = fileURLToPath(new URL('../docs/', import.meta.url));
const SCREENSHOTS = process.env.SCREENSHOTS === '1';
// Milliseconds between keys: fast in the test; about 100 and 75 WPM for the screenshots.
const ADA_DELAY = SCREENSHOTS ? 110 : 10;
const GRACE_DELAY = SCREENSHOTS ? 140 : 10;

interface Running {
  url: string;
  child: ChildProcess;
  output(): string;
}

async function startGame(): Promise<Running> {
  // Builds the pages when they are not built or changed (what `npm start` does first).
  const build = spawnSync(process.execPath, ['scripts/build-web.mjs'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(build.status, 0, `build-web failed:\n${build.stdout}\n${build.stderr}`);
  // SvelteKit's "Run npm run preview" hint points at a script that does not exist: dropped.
  assert.doesNotMatch(build.stdout, /npm run preview/);
  // HOST as adapter-node: loopback only here (the default, 0.0.0.0, is every interface).
  const child = spawn(process.execPath, ['server.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', WAIT_SECONDS: '1', NODE_ENV: 'test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 15_000);
    child.stdout!.on('data', () => {
      const m = /Typing race on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}):\n${out}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child, output: () => out };
}

describe('the race in a real browser (chromium)', { timeout: 240_000 }, () => {
  let server: Running;
  let browser: Browser;
  const errors: string[] = [];

  before(async () => {
    const executablePath = ensureChromium();
    server = await startGame();
    const { chromium } = createRequire(import.meta.url)('playwright-core') as typeof import('playwright-core');
    browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  });
  after(async () => {
    await browser?.close();
    if (server && server.child.exitCode === null) {
      const exited = new Promise((r) => server.child.once('exit', r));
      server.child.kill('SIGTERM');
      await exited;
    }
  });

  /** A player in their own browser context (their own guest cookie). */
  async function player(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(server.url + '/');
    // Before hydration the form would submit as a plain GET and a filled name could be reset.
    await page.locator('html[data-hydrated]').waitFor({ state: 'attached', timeout: 10_000 });
    return page;
  }
  const phaseOf = (page: Page) => page.locator('#phase').getAttribute('data-phase');
  const caretIndex = async (page: Page, playerId: string) =>
    Number(await page.locator(`[data-caret="${playerId}"]`).getAttribute('data-index'));

  it('two players match, count down, race to the end seeing each other, and get the results', async () => {
    const ada = await player();
    const grace = await player();
    await ada.fill('#name', 'Ada');
    await grace.fill('#name', 'Grace');
    if (SCREENSHOTS) await ada.screenshot({ path: DOCS + 'lobby.png' });

    await ada.click('#find');
    await ada.waitForURL(/\/race\/[A-Z0-9]{6}$/);
    await ada.locator('#phase[data-phase="waiting"]').waitFor();
    await grace.click('#find');
    await grace.waitForURL(/\/race\/[A-Z0-9]{6}$/);
    assert.equal(new URL(grace.url()).pathname, new URL(ada.url()).pathname, 'both players matched into the same room');

    // The waiting countdown, then 3-2-1 (shown big), then the race.
    await ada.locator('#countdown').waitFor({ timeout: 10_000 });
    await Promise.all([ada, grace].map((p) => p.locator('#phase[data-phase="racing"]').waitFor({ timeout: 10_000 })));
    const passage = (await ada.locator('#passage').getAttribute('data-passage'))!;
    assert.equal(await grace.locator('#passage').getAttribute('data-passage'), passage);
    assert.ok(passage.length > 100);
    const adaId = (await ada.locator('#players').getAttribute('data-you'))!;
    const graceId = (await grace.locator('#players').getAttribute('data-you'))!;
    assert.notEqual(adaId, graceId);
    // Every player's caret, in distinct colours, on both screens.
    assert.equal(await ada.locator('[data-caret]').count(), 2);
    const colours = await ada.locator('[data-caret]').evaluateAll((els) => els.map((e) => getComputedStyle(e).backgroundColor));
    assert.notEqual(colours[0], colours[1]);

    // Ada types a third, with a typo fixed by backspace.
    const third = Math.floor(passage.length / 3);
    await ada.keyboard.type(passage.slice(0, 10), { delay: ADA_DELAY });
    await ada.keyboard.type('#');
    await ada.locator('#passage .ch.wrong').first().waitFor();
    await ada.keyboard.press('Backspace');
    await ada.locator('#passage .ch.wrong').first().waitFor({ state: 'detached' });
    await ada.keyboard.type(passage.slice(10, third), { delay: ADA_DELAY });
    // Grace sees Ada's caret where Ada is, and her own still at the start.
    await grace.locator(`[data-caret="${adaId}"][data-index="${third}"]`).waitFor({ timeout: 15_000 });
    assert.equal(await caretIndex(grace, graceId), 0);
    // Grace types a quarter; Ada sees it.
    const quarter = Math.floor(passage.length / 4);
    await grace.keyboard.type(passage.slice(0, quarter), { delay: GRACE_DELAY });
    await ada.locator(`[data-caret="${graceId}"][data-index="${quarter}"]`).waitFor({ timeout: 15_000 });
    // Live WPM (published every second) and the latency from ping, on both pages.
    await ada.locator(`#players li[data-player="${adaId}"] .wpm:not([data-wpm="0"])`).waitFor({ timeout: 15_000 });
    await grace.locator(`#players li[data-player="${adaId}"] .wpm:not([data-wpm="0"])`).waitFor({ timeout: 15_000 });
    for (const p of [ada, grace]) assert.match((await p.locator('#latency').textContent())!, /^(<1|\d+(\.\d)?) ms$/);
    if (SCREENSHOTS) await ada.screenshot({ path: DOCS + 'race.png' });

    // Both finish: Ada first.
    await ada.keyboard.type(passage.slice(third), { delay: SCREENSHOTS ? ADA_DELAY : 5 });
    await grace.locator(`[data-caret="${adaId}"][data-index="${passage.length}"]`).waitFor({ timeout: 15_000 });
    assert.equal(await phaseOf(grace), 'racing');
    await grace.keyboard.type(passage.slice(quarter), { delay: SCREENSHOTS ? GRACE_DELAY : 5 });

    for (const p of [ada, grace]) {
      await p.locator('#results').waitFor({ timeout: 10_000 });
      assert.equal(await p.locator('#results tbody tr').count(), 2);
      assert.equal(await phaseOf(p), 'ended');
    }
    assert.match((await ada.locator('#results h2').textContent())!, /You won!/);
    assert.match((await grace.locator('#results h2').textContent())!, /You finished 2nd/);
    const adaRow = (await grace.locator(`#results tr[data-result="${adaId}"]`).textContent())!;
    assert.match(adaRow, /Ada/);
    assert.match(adaRow, /\d+%/);
    // Ada typed one wrong character of passage.length + 1: accuracy under 100 %, Grace's 100 %.
    assert.doesNotMatch(adaRow, /100%/);
    assert.match((await ada.locator(`#results tr[data-result="${graceId}"]`).textContent())!, /100%/);
    if (SCREENSHOTS) await grace.screenshot({ path: DOCS + 'results.png', fullPage: true });

    // Race again: a new room, waiting for an opponent.
    const before = new URL(ada.url()).pathname;
    await ada.click('#again');
    await ada.waitForURL((u) => /\/race\/[A-Z0-9]{6}$/.test(u.pathname) && u.pathname !== before);
    await ada.locator('#phase[data-phase="waiting"]').waitFor({ timeout: 15_000 });
    assert.deepEqual(errors, []);
  });

  it('a room that does not exist, or a malformed code: "No such race" and a button that finds one', async () => {
    // ZZZZZZ is well-formed but names no room (UNKNOWN_ROOM); NOPE00 and x fail the code's schema.
    for (const code of ['ZZZZZZ', 'NOPE00', 'x']) {
      const page = await player();
      await page.goto(`${server.url}/race/${code}`);
      await page.locator('#missing').waitFor({ timeout: 15_000 });
      const text = (await page.locator('main').textContent())!;
      assert.match(text, /No such race/, code);
      assert.match(text, new RegExp(`There is no race ${code}`), code);
      assert.doesNotMatch(text, /Joining|UNKNOWN_ROOM|Invalid event data/, code);
      assert.equal(await page.locator('[role="alert"]').count(), 0, code);
      if (code === 'NOPE00') {
        // A visitor who came by a link has no name yet: the server gives a guest one.
        await page.click('#find-another');
        await page.waitForURL(/\/race\/[A-Z0-9]{6}$/);
        // Joined: waiting, or already starting when matched into the room of the test above.
        await page.locator('#phase:not([data-phase="joining"])').waitFor({ timeout: 15_000 });
        assert.equal(await page.locator('#missing').count(), 0);
      }
      await page.context().close();
    }
  });

  it('HOST is honoured: listening on 127.0.0.1 only', async (t) => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i?.family === 'IPv4' && !i.internal);
    if (!external) return t.skip('no non-loopback IPv4 interface');
    const port = new URL(server.url).port;
    assert.equal((await fetch(`${server.url}/`)).status, 200);
    await assert.rejects(fetch(`http://${external.address}:${port}/`), `not reachable on ${external.address}`);
  });

  it("a bad name is refused in the lobby with the server's message", async () => {
    const page = await player();
    await page.fill('#name', 'Robert"); DROP');
    await page.click('#find');
    await page.locator('.lobby [role="alert"]').waitFor({ timeout: 15_000 });
    assert.match(new URL(page.url()).pathname, /^\/$/);
  });
});
