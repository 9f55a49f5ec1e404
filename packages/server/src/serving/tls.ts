// HTTPS through uWS SSLApp. uWS reads certificates from files only; apps usually hold PEM
// strings (from env or a secret store), so PEM values are written to a private temporary
// directory just long enough for uWS to load them, then removed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UwsAppOptions } from '../uws/index.ts';

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

/** Runs `use` with uWS file-name options for `identity`, cleaning up temporary files after. */
export function withTlsFiles<T>(identity: TlsIdentity, use: (options: UwsAppOptions) => T): T {
  if (typeof identity?.key !== 'string' || typeof identity.cert !== 'string') throw new TypeError('tls needs key and cert (PEM text or file paths)');
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
