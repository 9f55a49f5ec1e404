// The reference page in a real browser: Debian's chromium (installed with apt-get when
// missing, as in examples/typing-race) driven by playwright-core. The page renders every
// operation of the document, and every request it makes goes to the app (no CDN).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { openapi } from '../src/index.ts';
import { shopApp } from './app.ts';
import { ensureChromium } from '../../../scripts/chromium.ts';

let browser: Browser;
before(async () => {
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: ensureChromium(), args: ['--no-sandbox'] });
});
after(() => browser?.close());

test('the docs page renders every operation from memory, with no request outside the app', async () => {
  const app = shopApp();
  openapi.serve(app, {
    info: { title: 'Shop API', version: '1.0.0' },
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    docs: '/docs',
  });
  const server = await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${server.port}`;
  const page = await browser.newPage();
  try {
    const requests: string[] = [];
    page.on('request', (r) => void requests.push(r.url()));
    const errors: string[] = [];
    page.on('pageerror', (e) => void errors.push(e.message));
    await page.goto(`${base}/docs`);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, object> };
    const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
    assert.equal(await page.locator('.opblock').count(), operations);
    const summaries = await page.locator('.opblock-summary-path').allTextContents();
    assert.ok(
      summaries.some((s) => s.includes('/users/{id}')),
      summaries.join(', '),
    );
    assert.match((await page.locator('.info .title').textContent()) ?? '', /Shop API/);
    const outside = requests.filter((u) => !u.startsWith(`${base}/`) && !u.startsWith('data:'));
    assert.deepEqual(outside, [], 'no request leaves the app');
    assert.ok(requests.includes(`${base}/openapi.json`), requests.join('\n'));
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    await app.close();
  }
});

test("the page renders under the Content-Security-Policy default-src 'self'; img-src 'self' data: (no inline script or style)", async () => {
  const app = shopApp();
  const policy = "default-src 'self'; img-src 'self' data:";
  app.use((_req, res, next) => {
    res.header('content-security-policy', policy);
    return next();
  });
  openapi.serve(app, {
    info: { title: 'Shop API', version: '1.0.0' },
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    docs: '/docs',
  });
  const server = await app.listen(0, '127.0.0.1');
  const page = await browser.newPage();
  try {
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(`http://127.0.0.1:${server.port}/docs`);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    assert.ok((await page.locator('.opblock').count()) > 0);
    assert.deepEqual(violations, []);
  } finally {
    await page.close();
    await app.close();
  }
});
