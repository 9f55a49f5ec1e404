// uws/glibc-compat.ts: the ELF reader behind the glibc patch, fed any bytes. Properties: it
// answers or throws an Error with one of its own messages (never a RangeError from a read past
// the end, never a hang); a patched file no longer needs GLIBC_2.38, keeps its size, and
// patching it again changes nothing.
import { inspectElf, patchBuffer, requiredGlibcVersions } from '../../packages/server/src/uws/glibc-compat.ts';
import { assert, onlyDocumented, timed } from '../lib.mjs';

const OWN =
  /^(not an ELF file|only ELF64 little-endian is supported|missing \.dynsym|malformed ELF|libc\.so\.6 needs no|symbols other than the C23 trio)/;
const own = (e) => e.constructor === Error && OWN.test(e.message);

export function fuzz(data) {
  try {
    const { needs, symbols } = timed('inspectElf', () => inspectElf(data));
    assert(Array.isArray(needs) && Array.isArray(symbols), 'the parts');
    requiredGlibcVersions(data);
  } catch (err) {
    onlyDocumented(err, [Error], own);
    return;
  }
  let patched;
  try {
    patched = timed('patchBuffer', () => patchBuffer(data));
  } catch (err) {
    onlyDocumented(err, [Error], own);
    return;
  }
  if (patched === null) return;
  assert(patched.length === data.length, 'same size');
  assert(!requiredGlibcVersions(patched).includes('GLIBC_2.38'), 'no GLIBC_2.38 after the patch');
  assert(patchBuffer(patched) === null, 'patching twice changes nothing');
}
