// HTTPS through uWS SSLApp. uWS reads certificates from files only; apps usually hold PEM
// strings (from env or a secret store), so PEM values are written to a private temporary
// directory just long enough for uWS to load them, then removed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UwsAppOptions } from '../uws/index.ts';
import { checkKnownKeys } from '../core/options-check.ts';

export interface TlsIdentity {
  /** PEM text, or a path to a PEM file. */
  key: string;
  /** PEM text (certificate chain), or a path to it. */
  cert: string;
  passphrase?: string;
  /** CA bundle (PEM text or path), e.g. for client certificates. */
  ca?: string;
}

export interface TlsOptions extends TlsIdentity {
  /** Extra hostnames served with their own certificates (SNI). */
  sni?: Record<string, TlsIdentity>;
}

const isPem = (value: string) => value.includes('-----BEGIN ');

const IDENTITY_KEYS = Object.keys({ key: true, cert: true, passphrase: true, ca: true } satisfies Record<keyof TlsIdentity, true>);
const TLS_KEYS = [...IDENTITY_KEYS, 'sni'];

/** Refuses unknown keys in `tls` and in each of its `sni` identities (`keyFile:` for `key:` would otherwise serve no TLS at all). */
export function checkTlsKeys(where: string, tls: TlsOptions): void {
  checkKnownKeys(where, tls, TLS_KEYS);
  if (typeof tls.sni === 'object' && tls.sni !== null)
    for (const [host, identity] of Object.entries(tls.sni))
      if (typeof identity === 'object' && identity !== null)
        checkKnownKeys(`${where}.sni[${JSON.stringify(host)}]`, identity, IDENTITY_KEYS);
}

/** Runs `use` with uWS file-name options for `identity`, cleaning up temporary files after. */
export function withTlsFiles<T>(identity: TlsIdentity, use: (options: UwsAppOptions) => T): T {
  if (typeof identity?.key !== 'string' || typeof identity.cert !== 'string')
    throw new TypeError('tls needs key and cert (PEM text or file paths)');
  let dir: string | undefined;
  const file = (name: string, value: string) => {
    if (!isPem(value)) return value;
    dir ??= mkdtempSync(join(tmpdir(), 'tachyon-tls-'));
    const path = join(dir, name);
    writeFileSync(path, value, { mode: 0o600 });
    return path;
  };
  try {
    const options: UwsAppOptions = { key_file_name: file('key.pem', identity.key), cert_file_name: file('cert.pem', identity.cert) };
    if (identity.passphrase !== undefined) options.passphrase = identity.passphrase;
    if (identity.ca !== undefined) options.ca_file_name = file('ca.pem', identity.ca);
    return use(options);
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
