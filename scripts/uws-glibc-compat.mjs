#!/usr/bin/env node
// Install-time compatibility step for the registry build of uWebSockets.js.
//
// Why: the npm republish we depend on (@btc-vision/uwebsockets.js@20.57.0) was
// linked against glibc 2.38. Debian 12 ships 2.36, so dlopen fails with
// "version `GLIBC_2.38' not found". The only 2.38 imports are the C23 variants
// __isoc23_sscanf/strtol/strtoul, which differ from the classic functions only
// by also accepting "0b" binary prefixes — uWS never parses those. So we point
// the three imports at the classic GLIBC_2.2.5 symbols and drop the 2.38
// requirement. This runs ONLY when loading fails for exactly this reason; with
// glibc >= 2.38 or the official GitHub build it does nothing.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const C23_PREFIX = '__isoc23_';
const PATCHABLE = new Set(['__isoc23_sscanf', '__isoc23_strtol', '__isoc23_strtoul']);
const NEEDED = 'GLIBC_2.38';
const CLASSIC = 'GLIBC_2.2.5';
const BACKUP_SUFFIX = '.glibc238.orig';

const SHT_DYNSYM = 11;
const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;

function readCString(buf, offset) {
  const end = buf.indexOf(0, offset);
  return buf.toString('latin1', offset, end);
}

/** Parses the parts of an ELF64 little-endian shared object this patch needs. */
export function inspectElf(buf) {
  if (buf.readUInt32BE(0) !== 0x7f454c46) throw new Error('not an ELF file');
  if (buf[4] !== 2 || buf[5] !== 1) throw new Error('only ELF64 little-endian is supported');
  const shoff = Number(buf.readBigUInt64LE(0x28));
  const shentsize = buf.readUInt16LE(0x3a);
  const shnum = buf.readUInt16LE(0x3c);
  const sections = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    sections.push({
      type: buf.readUInt32LE(o + 4),
      offset: Number(buf.readBigUInt64LE(o + 0x18)),
      size: Number(buf.readBigUInt64LE(o + 0x20)),
      link: buf.readUInt32LE(o + 0x28),
      entsize: Number(buf.readBigUInt64LE(o + 0x38)),
    });
  }
  const dynsym = sections.find((s) => s.type === SHT_DYNSYM);
  const versym = sections.find((s) => s.type === SHT_GNU_VERSYM);
  const verneed = sections.find((s) => s.type === SHT_GNU_VERNEED);
  if (!dynsym || !versym || !verneed) throw new Error('missing .dynsym, .gnu.version or .gnu.version_r');
  const dynstr = sections[dynsym.link];
  const strAt = (off) => readCString(buf, dynstr.offset + off);

  // Walk the version-needs list: one Verneed per library, a chain of Vernaux per version.
  const needs = [];
  let vn = verneed.offset;
  for (;;) {
    const file = strAt(buf.readUInt32LE(vn + 4));
    const auxes = [];
    let aux = vn + buf.readUInt32LE(vn + 8);
    const count = buf.readUInt16LE(vn + 2);
    for (let i = 0; i < count; i++) {
      auxes.push({ at: aux, other: buf.readUInt16LE(aux + 6), name: strAt(buf.readUInt32LE(aux + 8)), next: buf.readUInt32LE(aux + 12) });
      aux += buf.readUInt32LE(aux + 12);
    }
    needs.push({ at: vn, file, auxes });
    const next = buf.readUInt32LE(vn + 12);
    if (next === 0) break;
    vn += next;
  }

  const symbols = [];
  const count = dynsym.size / dynsym.entsize;
  for (let i = 0; i < count; i++) {
    const o = dynsym.offset + i * dynsym.entsize;
    const nameOffset = buf.readUInt32LE(o);
    symbols.push({ index: i, at: o, nameOffset, name: strAt(nameOffset), version: buf.readUInt16LE(versym.offset + i * 2) & 0x7fff, versymAt: versym.offset + i * 2 });
  }
  return { needs, symbols };
}

/** Versions of glibc (libc.so.6) this binary requires. */
export function requiredGlibcVersions(buf) {
  const libc = inspectElf(buf).needs.find((n) => n.file === 'libc.so.6');
  return libc ? libc.auxes.map((a) => a.name) : [];
}

/**
 * Returns a patched copy of `original`, or null when it does not require GLIBC_2.38.
 * Throws (patching nothing) if anything other than the three known C23 imports needs 2.38.
 */
export function patchBuffer(original) {
  const buf = Buffer.from(original);
  const { needs, symbols } = inspectElf(buf);
  const libc = needs.find((n) => n.file === 'libc.so.6');
  const newer = libc?.auxes.find((a) => a.name === NEEDED);
  if (!libc || !newer) return null;
  const classic = libc.auxes.find((a) => a.name === CLASSIC);
  if (!classic) throw new Error(`libc.so.6 needs no ${CLASSIC} entry to redirect to`);

  const users = symbols.filter((s) => s.version === newer.other);
  const unknown = users.filter((s) => !PATCHABLE.has(s.name));
  if (unknown.length > 0) {
    throw new Error(`symbols other than the C23 trio need ${NEEDED}: ${unknown.map((s) => s.name).join(', ')}`);
  }
  for (const sym of users) {
    // "__isoc23_strtol\0" + 9 bytes is "strtol\0": the classic name is already in .dynstr.
    buf.writeUInt32LE(sym.nameOffset + C23_PREFIX.length, sym.at);
    const hidden = buf.readUInt16LE(sym.versymAt) & 0x8000;
    buf.writeUInt16LE(hidden | classic.other, sym.versymAt);
  }

  // Unlink the GLIBC_2.38 Vernaux from libc's chain and decrement the count.
  const idx = libc.auxes.indexOf(newer);
  if (idx === 0) {
    const first = buf.readUInt32LE(libc.at + 8);
    buf.writeUInt32LE(newer.next === 0 ? first : first + newer.next, libc.at + 8);
  } else {
    const prev = libc.auxes[idx - 1];
    buf.writeUInt32LE(newer.next === 0 ? 0 : prev.next + newer.next, prev.at + 12);
  }
  buf.writeUInt16LE(libc.auxes.length - 1, libc.at + 2);
  return buf;
}

/** Patches a file in place (backup kept beside it). Returns true if it changed the file. */
export function patchFile(path) {
  const original = readFileSync(path);
  const patched = patchBuffer(original);
  if (!patched) return false;
  if (!existsSync(path + BACKUP_SUFFIX)) copyFileSync(path, path + BACKUP_SUFFIX);
  writeFileSync(path, patched);
  return true;
}

/** Tries to load a module in a fresh process; returns '' on success or the error text. */
export function tryLoad(specifier, cwd) {
  const code = `try { require(${JSON.stringify(specifier)}); } catch (e) { process.stderr.write(String(e && e.message)); process.exit(1); }`;
  const r = spawnSync(process.execPath, ['-e', code], { cwd, encoding: 'utf8' });
  return r.status === 0 ? '' : r.stderr || `exit ${r.status}`;
}

function main() {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = join(here, '..');
  let pkgDir;
  try {
    pkgDir = dirname(createRequire(join(root, 'package.json')).resolve('uWebSockets.js'));
  } catch {
    console.log('[uws-glibc-compat] uWebSockets.js is not installed; nothing to do');
    return;
  }
  const before = tryLoad(pkgDir, root);
  if (before === '') {
    const patched = readdirSync(pkgDir).some((f) => f.endsWith(BACKUP_SUFFIX));
    console.log(`[uws-glibc-compat] uWebSockets.js loads${patched ? ' (already patched earlier)' : ' as shipped'}; nothing to do`);
    return;
  }
  if (!before.includes(`${NEEDED}' not found`)) {
    console.error(`[uws-glibc-compat] uWebSockets.js fails to load for another reason; not patching:\n${before}`);
    process.exitCode = 1;
    return;
  }
  const prefix = `uws_${process.platform}_${process.arch}_`;
  const binaries = readdirSync(pkgDir).filter((f) => f.startsWith(prefix) && f.endsWith('.node'));
  for (const file of binaries) {
    const changed = patchFile(join(pkgDir, file));
    console.log(`[uws-glibc-compat] ${file}: ${changed ? `redirected C23 imports to ${CLASSIC}, dropped ${NEEDED} (backup: ${file}${BACKUP_SUFFIX})` : 'no change needed'}`);
  }
  const after = tryLoad(pkgDir, root);
  if (after !== '') {
    console.error(`[uws-glibc-compat] patched binary still fails to load:\n${after}`);
    process.exitCode = 1;
    return;
  }
  console.log(`[uws-glibc-compat] patched uWebSockets.js loads under Node ${process.version}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
