// The glibc compatibility patch, on the real registry binary of uWebSockets.js.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { inspectElf, isGlibc238Error, patchBuffer, requiredGlibcVersions } from '../../src/uws/glibc-compat.ts';

const packageDir = dirname(createRequire(import.meta.url).resolve('uWebSockets.js'));
const binary = join(packageDir, `uws_linux_x64_${process.versions.modules}.node`);
// The registry build as shipped (a bench install patches in place and keeps the original beside it).
const original = readFileSync(existsSync(`${binary}.glibc238.orig`) ? `${binary}.glibc238.orig` : binary);

function versionIndex(buf: Buffer, name: string): number {
  return inspectElf(buf)
    .needs.find((n) => n.file === 'libc.so.6')!
    .auxes.find((a) => a.name === name)!.other;
}

describe('glibc compat patch', () => {
  test('the registry build needs GLIBC_2.38 only for the three C23 imports', () => {
    assert.ok(requiredGlibcVersions(original).includes('GLIBC_2.38'));
    const v238 = versionIndex(original, 'GLIBC_2.38');
    const users = inspectElf(original)
      .symbols.filter((s) => s.version === v238)
      .map((s) => s.name)
      .sort();
    assert.deepEqual(users, ['__isoc23_sscanf', '__isoc23_strtol', '__isoc23_strtoul']);
  });

  test('the patch drops GLIBC_2.38 and binds the classic GLIBC_2.2.5 symbols, in place', () => {
    const patched = patchBuffer(original)!;
    const versions = requiredGlibcVersions(patched);
    assert.ok(!versions.includes('GLIBC_2.38'));
    assert.equal(versions.length, requiredGlibcVersions(original).length - 1);
    const classic = versionIndex(patched, 'GLIBC_2.2.5');
    const { symbols } = inspectElf(patched);
    for (const name of ['sscanf', 'strtol', 'strtoul'])
      assert.ok(
        symbols.some((s) => s.name === name && s.version === classic),
        `${name}@GLIBC_2.2.5`,
      );
    assert.ok(!symbols.some((s) => s.name.startsWith('__isoc23_')));
    assert.equal(patched.length, original.length, 'same size');
    assert.equal(patchBuffer(patched), null, 'patching twice changes nothing');
  });

  test('refuses to patch when another symbol needs GLIBC_2.38', () => {
    const tampered = Buffer.from(original);
    const victim = inspectElf(tampered).symbols.find((s) => s.name === 'malloc')!;
    tampered.writeUInt16LE(versionIndex(tampered, 'GLIBC_2.38'), victim.versymAt);
    assert.throws(() => patchBuffer(tampered), /other than the C23 trio need GLIBC_2.38: malloc/);
  });

  test('refuses files that are not ELF64', () => {
    assert.throws(() => patchBuffer(Buffer.from('not an elf file at all, clearly')), /not an ELF/);
    assert.throws(() => patchBuffer(Buffer.alloc(3)), /not an ELF/);
  });

  // Fuzz finding (fuzz/targets/elf.mjs): a damaged file made the reader throw a RangeError from
  // a read past its end (or walk a zero-sized symbol table forever), not its own error.
  test('refuses a truncated or damaged ELF with "malformed ELF", never a RangeError or a hang', () => {
    for (const cut of [64, 200, 1000, original.length >> 1]) {
      assert.throws(
        () => inspectElf(original.subarray(0, cut)),
        (err: Error) => err.constructor === Error && /malformed ELF|missing \.dynsym/.test(err.message),
        `cut at ${cut}`,
      );
    }
    const pastTheEnd = Buffer.from(original);
    pastTheEnd.writeBigUInt64LE(BigInt(original.length + 4096), 0x28); // e_shoff past the end
    assert.throws(() => patchBuffer(pastTheEnd), /malformed ELF/);
    const zeroEntsize = Buffer.from(original);
    const shoff = Number(zeroEntsize.readBigUInt64LE(0x28));
    const shentsize = zeroEntsize.readUInt16LE(0x3a);
    for (let i = 0; i < zeroEntsize.readUInt16LE(0x3c); i++) {
      const o = shoff + i * shentsize;
      if (zeroEntsize.readUInt32LE(o + 4) === 11) zeroEntsize.writeBigUInt64LE(0n, o + 0x38); // .dynsym entsize 0
    }
    assert.throws(() => inspectElf(zeroEntsize), /malformed ELF/);
  });

  // Fuzz finding (fuzz/targets/elf.mjs, 2026-11-27): a Verneed whose count says 65,535 over
  // a Vernaux chain that does not advance made the reader visit the same entry 65,535 times
  // (26-80 ms for a 2 KB file). The walk is now bounded by the section's size.
  test('refuses a version chain that does not advance, without walking it 65,535 times', () => {
    const looping = Buffer.from(original);
    const shoff = Number(looping.readBigUInt64LE(0x28));
    const shentsize = looping.readUInt16LE(0x3a);
    let verneed = -1;
    for (let i = 0; i < looping.readUInt16LE(0x3c); i++) {
      const o = shoff + i * shentsize;
      if (looping.readUInt32LE(o + 4) === 0x6ffffffe) verneed = Number(looping.readBigUInt64LE(o + 0x18)); // SHT_GNU_verneed
    }
    assert.ok(verneed > 0, 'the binary has .gnu.version_r');
    const aux = verneed + looping.readUInt32LE(verneed + 8);
    looping.writeUInt16LE(0xffff, verneed + 2); // vn_cnt
    looping.writeUInt32LE(0, aux + 12); // vna_next: the chain stays on its first entry
    assert.throws(() => inspectElf(looping), /malformed ELF: a version entry lies outside/);
    assert.throws(() => patchBuffer(looping), /malformed ELF/);
  });

  test('recognises exactly the GLIBC_2.38 load error', () => {
    assert.ok(isGlibc238Error("/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by uws.node)"));
    assert.ok(!isGlibc238Error("version `GLIBC_2.39' not found"));
    assert.ok(!isGlibc238Error('Cannot find module'));
  });
});
