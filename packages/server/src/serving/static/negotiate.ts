// Which precompressed variant of a file to send, from Accept-Encoding. The header is
// parsed by the same parser as dynamic compression (http/compression.ts); the answer
// for each distinct header value is a 4-entry table indexed by the entry's variant mask,
// cached, so a request costs one Map lookup.
import { parseAcceptEncoding } from '../../http/compression.ts';
import type { Request } from '../../http/io/request.ts';
import { VARIANT_BR, VARIANT_GZIP, type Entry, type Variant } from './entry.ts';

const IDENTITY = 0;
const BR = 1;
const GZIP = 2;
const CACHE_SIZE = 32;

/**
 * For one Accept-Encoding value, the encoding to send for each combination of available
 * variants (index = mask: bit 0 br, bit 1 gzip; value 0 identity, 1 br, 2 gzip). Ties
 * prefer br, then gzip, then identity; identity competes on q only when listed explicitly
 * (it is always acceptable as a last resort).
 */
export function negotiateVariants(header: string): Uint8Array {
  const weights = parseAcceptEncoding(header);
  let qBr = weights.get('br') ?? -1;
  let qGz = weights.get('gzip') ?? -1;
  const qId = weights.get('identity') ?? -1;
  const qStar = weights.get('*') ?? -1;
  if (qBr < 0) qBr = qStar < 0 ? 0 : qStar;
  if (qGz < 0) qGz = qStar < 0 ? 0 : qStar;
  const base = qId < 0 ? 0 : qId;
  const out = new Uint8Array(4);
  for (let mask = 1; mask < 4; mask++) {
    let code = IDENTITY;
    let best = base;
    if (mask & VARIANT_GZIP && qGz > 0 && qGz >= best) (code = GZIP), (best = qGz);
    if (mask & VARIANT_BR && qBr > 0 && qBr >= best) code = BR;
    out[mask] = code;
  }
  return out;
}

/** Picks variants, remembering the tables of the last few Accept-Encoding values seen. */
export class VariantPicker {
  private readonly tables = new Map<string, Uint8Array>();
  private readonly noPreference = negotiateVariants('identity');

  pick(e: Entry, req: Request<any>): Variant {
    if (e.mask === 0) return e.identity;
    const ae = req.header('accept-encoding');
    let codes: Uint8Array;
    if (ae === undefined) codes = this.noPreference;
    else {
      let cached = this.tables.get(ae);
      if (cached === undefined) {
        cached = negotiateVariants(ae);
        if (this.tables.size >= CACHE_SIZE) this.tables.delete(this.tables.keys().next().value!);
        this.tables.set(ae, cached);
      }
      codes = cached;
    }
    const code = codes[e.mask];
    return code === BR ? e.br! : code === GZIP ? e.gzip! : e.identity;
  }
}
