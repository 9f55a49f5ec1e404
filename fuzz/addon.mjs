// Makes Jazzer.js's native fuzzer load on glibc < 2.38 (Debian 12, Ubuntu 22.04), the way
// Tachyon's own loader does for uWebSockets.js (packages/server/src/uws/glibc-compat.ts): the
// registry prebuild of @jazzer.js/fuzzer 4.0.0 was linked on a newer system and needs
//  - GLIBC_2.38, for __isoc23_strtol/strtoul only: glibc-compat's patchBuffer points them at
//    the classic symbols, exactly as for uWS;
//  - GLIBCXX_3.4.32 (GCC 13's libstdc++), for _ZSt21ios_base_library_initv only: GCC 13's
//    <iostream> names that symbol so the link pulls in libstdc++'s stream initialisation; it is
//    never called (no relocation refers to it). The version need is marked weak
//    (VER_FLG_WEAK), so an older libstdc++ without it is accepted.
// Anything else missing is left to fail with the loader's own message. The patched file
// replaces the prebuild in node_modules (a dev dependency); the original is kept beside it.
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { inspectElf, patchBuffer } from '../packages/server/src/uws/glibc-compat.ts';

const VER_FLG_WEAK = 0x2;
const IOS_INIT = '_ZSt21ios_base_library_initv';

function loads(file) {
  try {
    process.dlopen({ exports: {} }, file);
    return null;
  } catch (err) {
    return err.message;
  }
}

function weakenGlibcxx332(buf) {
  const { needs, symbols } = inspectElf(buf);
  const aux = needs.find((n) => n.file === 'libstdc++.so.6')?.auxes.find((a) => a.name === 'GLIBCXX_3.4.32');
  if (aux === undefined) return;
  const users = symbols.filter((s) => s.version === aux.other).map((s) => s.name);
  if (users.some((n) => n !== IOS_INIT)) throw new Error(`symbols other than ${IOS_INIT} need GLIBCXX_3.4.32: ${users.join(', ')}`);
  buf.writeUInt16LE(buf.readUInt16LE(aux.at + 4) | VER_FLG_WEAK, aux.at + 4);
}

/** Returns null when the fuzzer's addon loads (patching it first when needed), else why not. */
export function prepareAddon() {
  const require = createRequire(import.meta.url);
  const dir = join(dirname(require.resolve('@jazzer.js/fuzzer/package.json')), 'prebuilds');
  const file = join(dir, `fuzzer-${process.platform}-${process.arch}.node`);
  const first = loads(file);
  if (first === null) return null;
  if (process.platform !== 'linux' || !/(GLIBC_2\.38|GLIBCXX_3\.4\.32)' not found/.test(first)) return first;
  const orig = `${file}.orig`;
  if (!existsSync(orig)) copyFileSync(file, orig);
  const buf = patchBuffer(readFileSync(orig)) ?? Buffer.from(readFileSync(orig));
  weakenGlibcxx332(buf);
  writeFileSync(file, buf);
  return loads(file);
}
