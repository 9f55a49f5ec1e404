// Static-file fixtures for the quick bench: text files of exact sizes, generated on demand
// into a temporary directory (never committed). Layout: <root>/static/<name>, so the
// servers get STATIC_DIR=<root>/static and sirv can serve <root> with its `static/` prefix,
// the way adapter-node mounts its client directory.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** name -> exact size in bytes. */
export const STATIC_FILES = {
  'file-4k.txt': 4096,
  'file-64k.txt': 65536,
};

const WORDS = (
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore ' +
  'magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea commodo consequat ' +
  'duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat ' +
  'cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum'
).split(' ');

/**
 * Deterministic lorem-ipsum-like text of exactly `size` bytes (ASCII), in numbered lines of
 * at most 72 characters. A small linear congruential generator picks the words, so the
 * content is the same on every machine and not a trivially repeated block.
 */
export function loremText(size) {
  let seed = 0x2545f491 ^ size;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8;
  const lines = [];
  let total = 0;
  for (let n = 1; total < size; n++) {
    let line = `${String(n).padStart(4, '0')} `;
    for (;;) {
      const w = WORDS[next() % WORDS.length];
      if (line.length + w.length + 1 > 71) break;
      line += `${w} `;
    }
    line = `${line.trimEnd()}.\n`;
    lines.push(line);
    total += line.length;
  }
  const text = lines.join('').slice(0, size - 1) + '\n';
  if (Buffer.byteLength(text) !== size) throw new Error(`fixture generator: got ${Buffer.byteLength(text)} bytes, wanted ${size}`);
  return text;
}

/** Creates a fresh temp directory with the fixtures; returns { root, dir, files, remove }. */
export function createStaticFixtures() {
  const root = mkdtempSync(path.join(os.tmpdir(), 'tachyon-bench-static-'));
  const dir = path.join(root, 'static');
  mkdirSync(dir);
  const files = {};
  for (const [name, size] of Object.entries(STATIC_FILES)) {
    const body = Buffer.from(loremText(size), 'latin1');
    writeFileSync(path.join(dir, name), body);
    files[name] = body;
  }
  return {
    root,
    dir,
    files,
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
