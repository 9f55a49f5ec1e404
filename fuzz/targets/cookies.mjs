// http/io/cookies.ts: parsing never throws and yields a prototype-free record; serializing
// throws only TypeError; serialize → parse gives the value back; sign → unsign gives the value
// back, and an altered or foreign signature never verifies.
import { parseCookies, serializeCookie, signCookieValue, unsignCookieValue } from '../../packages/server/src/http/io/cookies.ts';
import { assert, onlyDocumented, prototypeFree, timed } from '../lib.mjs';

const SECRETS = ['current secret', 'previous secret'];

export function fuzz(data) {
  const text = data.toString('utf8');
  const jar = timed('parseCookies', () => parseCookies(text));
  assert(prototypeFree(jar), 'the record has no prototype');
  for (const v of Object.values(jar)) assert(typeof v === 'string', 'string values');

  // The input split in two: a name and a value for the round trips.
  const cut = text.indexOf('\u0000');
  const name = cut === -1 ? 'n' : text.slice(0, cut);
  const value = cut === -1 ? text : text.slice(cut + 1);
  let header;
  try {
    header = timed('serializeCookie', () => serializeCookie(name, value, { path: '/', httpOnly: true }));
  } catch (err) {
    onlyDocumented(err, [TypeError]);
  }
  if (header !== undefined) {
    const pair = header.slice(0, header.indexOf(';'));
    const back = parseCookies(pair)[name];
    assert(back === value, `serialize → parse: ${JSON.stringify(value)} came back as ${JSON.stringify(back)}`);
  }

  const signed = signCookieValue(value, SECRETS[0]);
  assert(unsignCookieValue(signed, SECRETS) === value, `sign → unsign of ${JSON.stringify(value)}`);
  assert(unsignCookieValue(signCookieValue(value, 'another secret'), SECRETS) === undefined, 'a foreign signature never verifies');
  const verified = timed('unsignCookieValue', () => unsignCookieValue(text, SECRETS));
  if (verified !== undefined)
    assert(
      signCookieValue(verified, SECRETS[0]) === text || signCookieValue(verified, SECRETS[1]) === text,
      'only a signed value verifies',
    );
}
