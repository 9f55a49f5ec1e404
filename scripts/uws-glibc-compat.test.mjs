// Tests the install-time glibc compatibility patch on the real registry binary.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { inspectElf, patchBuffer, requiredGlibcVersions } from './uws-glibc-compat.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkgDir = dirname(createRequire(join(root, 'package.json')).resolve('uWebSockets.js'));
const binary = join(pkgDir, `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
// The untouched registry build: the backup if the install step patched it, else the file itself.
const original = readFileSync(existsSync(binary + '.glibc238.orig') ? binary + '.glibc238.orig' : binary);
const work = mkdtempSync(join(tmpdir(), 'uws-compat-'));
after(() => rmSync(work, { recursive: true, force: true }));

describe('uws glibc compat patch', { skip: process.platform !== 'linux' && 'ELF patching is Linux-only' }, () => {
  test('the registry build needs GLIBC_2.38 only for the three C23 imports', () => {
    assert.ok(requiredGlibcVersions(original).includes('GLIBC_2.38'));
    const { needs, symbols } = inspectElf(original);
    const v238 = needs.find((n) => n.file === 'libc.so.6').auxes.find((a) => a.name === 'GLIBC_2.38').other;
    assert.deepEqual(symbols.filter((s) => s.version === v238).map((s) => s.name).sort(), ['__isoc23_sscanf', '__isoc23_strtol', '__isoc23_strtoul']);
  });

  test('the patch drops GLIBC_2.38 and binds the classic GLIBC_2.2.5 symbols', () => {
    const patched = patchBuffer(original);
    const versions = requiredGlibcVersions(patched);
    assert.ok(!versions.includes('GLIBC_2.38'));
    assert.equal(versions.length, requiredGlibcVersions(original).length - 1);
    const { needs, symbols } = inspectElf(patched);
    const classic = needs.find((n) => n.file === 'libc.so.6').auxes.find((a) => a.name === 'GLIBC_2.2.5').other;
    for (const name of ['sscanf', 'strtol', 'strtoul']) {
      assert.ok(symbols.some((s) => s.name === name && s.version === classic), `${name}@GLIBC_2.2.5`);
    }
    assert.ok(!symbols.some((s) => s.name.startsWith('__isoc23_')));
    assert.equal(patched.length, original.length, 'patched in place, same size');
    assert.equal(patchBuffer(patched), null, 'patching twice changes nothing');
  });

  test('the patched binary loads and serves a real request (content-length parsing included)', () => {
    const file = join(work, `uws_test_${process.versions.modules}.node`);
    writeFileSync(file, patchBuffer(original));
    const script = `
      const m = { exports: {} };
      process.dlopen(m, ${JSON.stringify(file)});
      const uws = m.exports;
      const app = uws.App().post('/echo', (res) => {
        let n = 0; res.onAborted(() => {});
        res.onData((ab, last) => { n += ab.byteLength; if (last) res.end('got ' + n); });
      });
      app.listen('127.0.0.1', 0, async (ls) => {
        const port = uws.us_socket_local_port(ls);
        const r = await fetch('http://127.0.0.1:' + port + '/echo', { method: 'POST', body: 'x'.repeat(12345) });
        console.log(await r.text());
        uws.us_listen_socket_close(ls); app.close();
      });`;
    const out = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20000 });
    assert.equal(out.status, 0, out.stderr);
    assert.equal(out.stdout.trim(), 'got 12345');
  });

  test('refuses to patch when another symbol needs GLIBC_2.38', () => {
    const tampered = Buffer.from(original);
    const { needs, symbols } = inspectElf(tampered);
    const v238 = needs.find((n) => n.file === 'libc.so.6').auxes.find((a) => a.name === 'GLIBC_2.38').other;
    const victim = symbols.find((s) => s.name === 'malloc');
    tampered.writeUInt16LE(v238, victim.versymAt);
    assert.throws(() => patchBuffer(tampered), /other than the C23 trio need GLIBC_2.38: malloc/);
  });

  test('refuses files that are not ELF64', () => {
    assert.throws(() => patchBuffer(Buffer.from('not an elf file at all, clearly')), /not an ELF/);
  });

  test('the install step is a no-op once uWebSockets.js loads', () => {
    const out = spawnSync(process.execPath, [join(root, 'scripts/uws-glibc-compat.mjs')], { encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    assert.match(out.stdout, /nothing to do/);
  });
});
