// The glibc compatibility fix for the registry build of uWebSockets.js, as pure functions
// over the bytes of the addon (no file system here: see load.ts for where it is applied).
//
// Why: the npm republish we depend on (@btc-vision/uwebsockets.js@20.57.0) was linked
// against glibc 2.38, while Debian 12, Ubuntu 22.04 and the node:*-bookworm images ship
// 2.35–2.36, so dlopen fails with "version `GLIBC_2.38' not found". The only 2.38 imports
// are the C23 variants __isoc23_sscanf/strtol/strtoul, which differ from the classic
// functions only in also accepting "0b" binary prefixes, which uWS never parses. So the
// three imports are pointed at the classic GLIBC_2.2.5 symbols and the 2.38 requirement is
// dropped. Anything else needing 2.38 makes the patch refuse (we never guess).

const C23_PREFIX = '__isoc23_';
const PATCHABLE = new Set(['__isoc23_sscanf', '__isoc23_strtol', '__isoc23_strtoul']);
export const GLIBC_NEEDED = 'GLIBC_2.38';
const CLASSIC = 'GLIBC_2.2.5';

const SHT_DYNSYM = 11;
const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;

interface Section {
  type: number;
  offset: number;
  size: number;
  link: number;
  entsize: number;
}

export interface VersionNeed {
  /** Offset of the Vernaux entry. */
  at: number;
  /** The version index symbols refer to. */
  other: number;
  name: string;
  next: number;
}

export interface LibraryNeeds {
  at: number;
  file: string;
  auxes: VersionNeed[];
}

export interface DynamicSymbol {
  index: number;
  at: number;
  nameOffset: number;
  name: string;
  version: number;
  versymAt: number;
}

function cString(buf: Buffer, offset: number): string {
  return buf.toString('latin1', offset, buf.indexOf(0, offset));
}

/**
 * Parses the parts of an ELF64 little-endian shared object the patch needs. A damaged file
 * (offsets past its end, a section that does not fit) is refused with "malformed ELF", never
 * a RangeError from a read past the end, and never a hang (fuzz/targets/elf.mjs).
 */
export function inspectElf(buf: Buffer): { needs: LibraryNeeds[]; symbols: DynamicSymbol[] } {
  if (buf.length < 64 || buf.readUInt32BE(0) !== 0x7f454c46) throw new Error('not an ELF file');
  if (buf[4] !== 2 || buf[5] !== 1) throw new Error('only ELF64 little-endian is supported');
  try {
    return readElf(buf);
  } catch (err) {
    if (err instanceof RangeError) throw new Error(`malformed ELF: ${err.message}`);
    throw err;
  }
}

/** An ELF64 symbol table entry is 24 bytes; a smaller entsize would make the walk below endless. */
const SYM_BYTES = 24;
/** A Verneed and a Vernaux are 16 bytes each. */
const VERSION_ENTRY_BYTES = 16;

function fits(buf: Buffer, s: Section): boolean {
  return Number.isSafeInteger(s.offset + s.size) && s.offset + s.size <= buf.length;
}

function readElf(buf: Buffer): { needs: LibraryNeeds[]; symbols: DynamicSymbol[] } {
  const shoff = Number(buf.readBigUInt64LE(0x28));
  const shentsize = buf.readUInt16LE(0x3a);
  const shnum = buf.readUInt16LE(0x3c);
  const sections: Section[] = [];
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
  if (dynstr === undefined || ![dynsym, versym, verneed, dynstr].every((sec) => fits(buf, sec)) || dynsym.entsize < SYM_BYTES)
    throw new Error('malformed ELF: a dynamic section does not fit in the file');
  const strAt = (off: number) => cString(buf, dynstr.offset + off);

  // The version-needs list: one Verneed per library, a chain of Vernaux per version. Both
  // kinds of entry are 16 bytes and live in .gnu.version_r, so the section's size bounds how
  // many a walk may visit: a damaged count (up to 65,535) over a chain that does not advance
  // would otherwise read the same entry again and again (fuzz finding of 2026-11-27: 26-80 ms
  // for a 2 KB file).
  const needs: LibraryNeeds[] = [];
  const entryEnd = verneed.offset + verneed.size;
  let budget = Math.floor(verneed.size / VERSION_ENTRY_BYTES);
  const entry = (at: number): number => {
    if (--budget < 0 || at < verneed.offset || at + VERSION_ENTRY_BYTES > entryEnd)
      throw new Error('malformed ELF: a version entry lies outside .gnu.version_r');
    return at;
  };
  for (let vn = verneed.offset; ; ) {
    entry(vn);
    const auxes: VersionNeed[] = [];
    let aux = vn + buf.readUInt32LE(vn + 8);
    const count = buf.readUInt16LE(vn + 2);
    for (let i = 0; i < count; i++) {
      entry(aux);
      auxes.push({ at: aux, other: buf.readUInt16LE(aux + 6), name: strAt(buf.readUInt32LE(aux + 8)), next: buf.readUInt32LE(aux + 12) });
      aux += buf.readUInt32LE(aux + 12);
    }
    needs.push({ at: vn, file: strAt(buf.readUInt32LE(vn + 4)), auxes });
    const next = buf.readUInt32LE(vn + 12);
    if (next === 0) break;
    vn += next;
  }

  const symbols: DynamicSymbol[] = [];
  const count = dynsym.size / dynsym.entsize;
  for (let i = 0; i < count; i++) {
    const o = dynsym.offset + i * dynsym.entsize;
    const nameOffset = buf.readUInt32LE(o);
    const versymAt = versym.offset + i * 2;
    symbols.push({ index: i, at: o, nameOffset, name: strAt(nameOffset), version: buf.readUInt16LE(versymAt) & 0x7fff, versymAt });
  }
  return { needs, symbols };
}

/** Versions of glibc (libc.so.6) a binary requires. */
export function requiredGlibcVersions(buf: Buffer): string[] {
  const libc = inspectElf(buf).needs.find((n) => n.file === 'libc.so.6');
  return libc ? libc.auxes.map((a) => a.name) : [];
}

/**
 * Returns a patched copy of `original`, or null when it does not require GLIBC_2.38.
 * Throws (patching nothing) if anything other than the three known C23 imports needs 2.38.
 */
export function patchBuffer(original: Uint8Array): Buffer | null {
  const buf = Buffer.from(original);
  const { needs, symbols } = inspectElf(buf);
  const libc = needs.find((n) => n.file === 'libc.so.6');
  const newer = libc?.auxes.find((a) => a.name === GLIBC_NEEDED);
  if (!libc || !newer) return null;
  const classic = libc.auxes.find((a) => a.name === CLASSIC);
  if (!classic) throw new Error(`libc.so.6 needs no ${CLASSIC} entry to redirect to`);

  const users = symbols.filter((s) => s.version === newer.other);
  const unknown = users.filter((s) => !PATCHABLE.has(s.name));
  if (unknown.length > 0) throw new Error(`symbols other than the C23 trio need ${GLIBC_NEEDED}: ${unknown.map((s) => s.name).join(', ')}`);
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
    const prev = libc.auxes[idx - 1]!;
    buf.writeUInt32LE(newer.next === 0 ? 0 : prev.next + newer.next, prev.at + 12);
  }
  buf.writeUInt16LE(libc.auxes.length - 1, libc.at + 2);
  return buf;
}

/** True when a load error is exactly the one the patch fixes. */
export function isGlibc238Error(message: string): boolean {
  return message.includes(`${GLIBC_NEEDED}' not found`);
}
