// adapter() options and the environment: bad values fail early with the name of what is wrong.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import adapter from '@tachyon/sveltekit';
import { parseBytes, readEnv } from '@tachyon/sveltekit/runtime';

describe('adapter() options', () => {
  it('has defaults and the adapter shape SvelteKit expects', () => {
    const a = adapter();
    assert.equal(a.name, '@tachyon/sveltekit');
    assert.equal(typeof a.adapt, 'function');
    assert.equal(a.supports.read(), true);
    assert.equal(a.vite.plugins.length, 1);
    assert.equal(a.vite.plugins[0]!.name, '@tachyon/sveltekit');
  });

  it('refuses unknown and mistyped options with clear errors', () => {
    assert.throws(() => adapter({ outt: 'x' } as never), /unknown option "outt" \(did you mean "out"\?\)/);
    assert.throws(() => adapter({ out: '' }), /out must be a non-empty/);
    assert.throws(() => adapter({ precompress: 'yes' as never }), /precompress must be a boolean/);
    assert.throws(() => adapter({ envPrefix: 'MY-' }), /envPrefix must be letters/);
    assert.throws(() => adapter({ websocket: { path: 'ws' } }), /websocket.path must be an absolute URL path/);
    assert.throws(() => adapter({ websocket: { path: '/ws/' } }), /websocket.path/);
    assert.throws(() => adapter({ websocket: { hooks: '' } }), /websocket.hooks/);
    assert.throws(
      () => adapter({ websocket: { paht: '/x' } as never }),
      /adapter\(\) websocket: unknown option "paht" \(did you mean "path"\?\)/,
    );
    assert.throws(() => adapter({ websocket: true as never }), /websocket must be an object/);
    assert.throws(() => adapter({ lightWeb: 'no' as never }), /lightWeb must be a boolean/);
    assert.throws(() => adapter(null as never), /must be an object/);
    assert.doesNotThrow(() =>
      adapter({ out: 'dist', precompress: false, envPrefix: 'APP_', websocket: { path: '/live', hooks: 'src/realtime' } }),
    );
    assert.doesNotThrow(() => adapter({ websocket: false }));
    assert.doesNotThrow(() => adapter({ lightWeb: false }));
  });
});

describe('environment', () => {
  it('reads adapter-node defaults', () => {
    const env = readEnv('', undefined, {});
    assert.equal(env.host, '0.0.0.0');
    assert.equal(env.port, 3000);
    assert.equal(env.bodySizeLimit, 512 * 1024);
    assert.equal(env.shutdownTimeout, 30);
    assert.equal(env.xffDepth, 1);
    assert.equal(env.origin, undefined);
    assert.equal(env.workers, undefined, 'WORKERS unset: one process');
  });

  it('reads WORKERS (a number or auto, with the prefix too) and refuses anything else', () => {
    assert.equal(readEnv('', undefined, { WORKERS: '2' }).workers, 2);
    assert.equal(readEnv('', undefined, { WORKERS: ' auto ' }).workers, 'auto');
    assert.equal(readEnv('', undefined, { WORKERS: '' }).workers, undefined);
    assert.equal(readEnv('APP_', undefined, { APP_WORKERS: '4' }).workers, 4);
    for (const bad of ['two', '-1', '1.5', '2000', 'AUTO'])
      assert.throws(() => readEnv('', undefined, { WORKERS: bad }), /Invalid value for environment variable WORKERS/, bad);
  });

  it('parses BODY_SIZE_LIMIT like adapter-node', () => {
    assert.equal(parseBytes('512K'), 524288);
    assert.equal(parseBytes('1m'), 1048576);
    assert.equal(parseBytes('2G'), 2 * 1024 ** 3);
    assert.equal(parseBytes('100'), 100);
    assert.equal(parseBytes('Infinity'), Infinity);
    assert.ok(Number.isNaN(parseBytes('1T')));
    assert.ok(Number.isNaN(parseBytes('')));
  });

  it('applies the prefix and refuses unexpected prefixed variables', () => {
    const env = readEnv('APP_', undefined, { APP_PORT: '8080', PORT: '1', APP_ADDRESS_HEADER: 'True-Client-IP' });
    assert.equal(env.port, 8080);
    assert.equal(env.addressHeader, 'true-client-ip');
    assert.throws(() => readEnv('APP_', undefined, { APP_SECRET: 'x' }), /change envPrefix \(APP_\).*APP_SECRET/);
  });

  it('takes ORIGIN over the baked paths.origin, and checks it', () => {
    assert.equal(readEnv('', 'https://baked.example', {}).origin, 'https://baked.example');
    assert.equal(readEnv('', 'https://baked.example', { ORIGIN: 'http://env.example:8080' }).origin, 'http://env.example:8080');
    assert.throws(() => readEnv('', undefined, { ORIGIN: 'https://x.example/path' }), /ORIGIN/);
    assert.throws(() => readEnv('', undefined, { ORIGIN: 'ftp://x.example' }), /ORIGIN/);
  });

  it('refuses bad values, naming the variable', () => {
    assert.throws(() => readEnv('', undefined, { PORT: '70000' }), /PORT/);
    assert.throws(() => readEnv('', undefined, { XFF_DEPTH: '0' }), /XFF_DEPTH/);
    assert.throws(() => readEnv('', undefined, { SHUTDOWN_TIMEOUT: '1.5' }), /SHUTDOWN_TIMEOUT/);
    assert.throws(() => readEnv('', undefined, { BODY_SIZE_LIMIT: 'big' }), /BODY_SIZE_LIMIT/);
    assert.throws(() => readEnv('', undefined, { ADDRESS_HEADER: 'bad header' }), /ADDRESS_HEADER/);
    assert.throws(() => readEnv('', undefined, { SSL_CERT: 'cert.pem' }), /SSL_CERT and SSL_KEY/);
    assert.throws(() => readEnv('', undefined, { SOCKET_PATH: '/tmp/x.sock' }), /SOCKET_PATH is not supported/);
  });
});
