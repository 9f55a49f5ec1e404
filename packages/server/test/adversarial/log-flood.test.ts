// A flood of bad input does not flood the log (core/throttled-log.ts): the first lines of each
// kind are written, the rest counted and summarized at the end of the window. Real sockets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ThrottledLog } from '../../src/core/throttled-log.ts';
import { App } from '../../src/index.ts';
import { rawRequest, recordingLogger, sleep, start, statusOf } from '../helpers.ts';

test('ThrottledLog: a burst per message and window, then one summary line with the count left out', async () => {
  const log = recordingLogger();
  const limited = new ThrottledLog(log.logger, { burst: 3, windowMs: 80 });
  for (let i = 0; i < 10; i++) limited.write('warn', { i }, 'frame too big');
  limited.write('warn', { other: true }, 'origin refused');
  assert.deepEqual(
    log.entries.map((e) => [e.msg, e.obj]),
    [
      ['frame too big', { i: 0 }],
      ['frame too big', { i: 1 }],
      ['frame too big', { i: 2 }],
      ['origin refused', { other: true }],
    ],
    'each message has its own burst',
  );
  await sleep(150);
  assert.deepEqual(log.entries.at(-1), { level: 'warn', obj: { suppressed: 7, windowMs: 80 }, msg: 'frame too big' });
  // After the summary a new window starts: its burst is written again.
  limited.write('warn', { i: 10 }, 'frame too big');
  assert.deepEqual(log.entries.at(-1)?.obj, { i: 10 });
  assert.equal(log.entries.length, 6);
});

test('ThrottledLog: a window that never overflowed writes no summary', async () => {
  const log = recordingLogger();
  const limited = new ThrottledLog(log.logger, { burst: 5, windowMs: 30 });
  for (let i = 0; i < 5; i++) limited.write('warn', { i }, 'x');
  await sleep(80);
  for (let i = 5; i < 10; i++) limited.write('warn', { i }, 'x');
  assert.equal(log.entries.length, 10, 'two full bursts, no summary');
  assert.ok(log.entries.every((e) => !('suppressed' in (e.obj as object))));
});

test('ThrottledLog: messages beyond the tracked kinds are written, not tracked without bound', () => {
  const log = recordingLogger();
  const limited = new ThrottledLog(log.logger, { burst: 1 });
  for (let i = 0; i < 300; i++) limited.write('warn', {}, `kind ${i}`);
  for (let i = 0; i < 3; i++) limited.write('warn', {}, 'kind 299');
  assert.equal(log.entries.length, 303, 'the first 256 kinds get their burst; past that, every line');
});

test('100 requests with ambiguous framing: each refused with 400, 20 log lines, the server keeps serving', async () => {
  const log = recordingLogger();
  const app = new App({ logger: log.logger });
  app.get('/ok', () => 'ok');
  app.post('/echo', async (req) => req.text());
  const running = await start(app);
  try {
    const bad = 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello';
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => rawRequest(running.port, bad, { timeout: 3000 })));
      assert.deepEqual(answers.map(statusOf), Array(10).fill(400));
    }
    const lines = log.entries.filter((e) => e.level === 'warn' && /ambiguous framing/.test(e.msg ?? ''));
    assert.equal(lines.length, 20, 'the first 20 logged, the other 80 counted for the summary at the end of the window');
    const ok = await fetch(`http://127.0.0.1:${running.port}/ok`);
    assert.equal(await ok.text(), 'ok');
  } finally {
    await running.close();
  }
});
