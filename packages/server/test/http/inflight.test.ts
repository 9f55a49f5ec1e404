// The in-flight tracker (src/http/tracker.ts) keeps async requests in a list where each
// response knows its index, and settling one moves the last entry into its place. These
// tests settle requests out of order and check that the ones left are still the ones the
// timeout sweep and the shutdown find: a wrong index would lose a request (never timed out,
// never drained) or count one twice.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { App } from '../../src/index.ts';
import { eventually, recordingLogger, sleep, start } from '../helpers.ts';

describe('in-flight requests', () => {
  test('settled out of order: the count follows, and every request left still times out', async () => {
    const app = new App({ logger: recordingLogger().logger });
    const release = new Map<number, () => void>();
    app.get('/wait/:n', (req) => new Promise<string>((resolve) => release.set(Number(req.params.n), () => resolve(req.params.n))));
    // Never answered: only the timeout sweep ends them, wherever settling the others moved them.
    app.get('/hang/:n', { timeout: 3000 }, () => new Promise<never>(() => {}));
    const srv = await start(app);
    try {
      // Opened one at a time, so they are tracked in this order: hangs between the waits.
      const waits = new Map<number, Promise<string>>();
      const hangs: Promise<number | string>[] = [];
      const n = 12;
      for (let i = 0; i < n; i++) {
        if (i % 3 === 1) {
          const answer = fetch(`${srv.url}/hang/${i}`, { signal: AbortSignal.timeout(10_000) });
          hangs.push(
            answer.then(
              (r) => r.status,
              () => 'lost',
            ),
          );
        } else
          waits.set(
            i,
            fetch(`${srv.url}/wait/${i}`).then((r) => r.text()),
          );
        await eventually(() => app.inflight === i + 1, 5000);
      }
      // Last, first, middle: each kind of removal (the last entry itself, one moved into a hole).
      const order = [11, 0, 6, 2, 9, 3, 8, 5];
      for (let k = 0; k < order.length; k++) {
        const i = order[k]!;
        release.get(i)!();
        assert.equal(await waits.get(i), String(i));
        assert.equal(app.inflight, n - k - 1, `after releasing ${k + 1}`);
      }
      assert.deepEqual(await Promise.all(hangs), [503, 503, 503, 503], 'each request left over timed out');
      await eventually(() => app.inflight === 0, 5000);
    } finally {
      await srv.close();
    }
  });

  test('close() waits for every request still in flight, whichever settled first', async () => {
    const app = new App({ logger: recordingLogger().logger });
    app.get('/sleep/:ms', async (req) => {
      await sleep(Number(req.params.ms));
      return req.params.ms;
    });
    const srv = await start(app);
    const delays = [300, 50, 250, 100, 200, 150];
    const answers = delays.map((ms) => fetch(`${srv.url}/sleep/${ms}`).then((r) => r.text()));
    await eventually(() => app.inflight === delays.length, 5000);
    const t0 = Date.now();
    await srv.server.close({ timeout: 5000 });
    assert.ok(Date.now() - t0 >= 150, 'close() waited for the slowest request');
    assert.deepEqual(await Promise.all(answers), delays.map(String));
    assert.equal(app.inflight, 0);
  });

  test('a forced close drops every request still in flight, once each', async () => {
    const app = new App({ logger: recordingLogger().logger });
    app.get('/forever/:n', () => new Promise<never>(() => {}));
    app.get('/quick', async () => {
      await sleep(20);
      return 'quick';
    });
    const srv = await start(app);
    const dropped = Array.from({ length: 5 }, (_, i) =>
      fetch(`${srv.url}/forever/${i}`).then(
        () => 'answered',
        () => 'dropped',
      ),
    );
    assert.equal(await (await fetch(`${srv.url}/quick`)).text(), 'quick');
    await eventually(() => app.inflight === 5, 5000);
    await srv.server.close({ timeout: 100 });
    assert.deepEqual(await Promise.all(dropped), Array(5).fill('dropped'));
    assert.equal(app.inflight, 0);
  });
});
