// The documents of the repository's example app (examples/typing-race: its HTTP routes and
// its game WebSocket route with events), validated like the others.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '@tachyon/server';
import { createGameApp } from '../../../examples/typing-race/src/server/app.ts';
import { generateAsyncApi, generateOpenApi } from '../src/index.ts';
import { assertValidAsyncApi, assertValidOpenApi } from './app.ts';

test('the typing-race example: a valid OpenAPI 3.1 and a valid AsyncAPI 3.0 document', async () => {
  const game = createGameApp({ app: { logger: silentLogger } });
  try {
    const warnings: string[] = [];
    const info = { title: 'Typing race', version: '1.0.0' };
    const doc = generateOpenApi(game.app, { info, onWarning: (m) => warnings.push(m) });
    await assertValidOpenApi(doc);
    assert.ok(Object.keys(doc.paths).length > 0);
    const events = generateAsyncApi(game.app, { info, onWarning: (m) => warnings.push(m) });
    await assertValidAsyncApi(events);
    assert.ok(Object.keys(events.channels).length > 0);
    assert.deepEqual(warnings, []);
  } finally {
    game.stop();
    await game.app.close();
  }
});
