// The directory SAS the catalog service vends on hierarchical-namespace accounts, checked against the string-to-sign
// of Microsoft's "Create a service SAS" (version 2020-12-06 and later), computed here independently of the code.
import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { generateBlobSASQueryParameters, SASProtocol, StorageSharedKeyCredential } from '@azure/storage-blob';
import { directorySas } from './azureSas.ts';

const signer = { accountName: 'eiderlake', accountKey: Buffer.from('a known account key for the directory SAS test').toString('base64'), endpoint: 'https://eiderlake.blob.core.windows.net' };
const NOW = Date.UTC(2026, 0, 15, 12, 0, 0, 250);
const TTL = 900;

/** The documented string-to-sign of a service SAS, from the token's own fields, and its HMAC-SHA256 under the key. */
function expectedSig(q: URLSearchParams, canonicalizedResource: string): string {
  const stringToSign = [
    q.get('sp') ?? '', // signedPermissions
    q.get('st') ?? '', // signedStart
    q.get('se') ?? '', // signedExpiry
    canonicalizedResource,
    q.get('si') ?? '', // signedIdentifier
    q.get('sip') ?? '', // signedIP
    q.get('spr') ?? '', // signedProtocol
    q.get('sv') ?? '', // signedVersion
    q.get('sr') ?? '', // signedResource
    '', // signedSnapshotTime
    q.get('ses') ?? '', // signedEncryptionScope
    '', // rscc
    '', // rscd
    '', // rsce
    '', // rscl
    '', // rsct
  ].join('\n');
  return createHmac('sha256', Buffer.from(signer.accountKey, 'base64')).update(stringToSign, 'utf8').digest('base64');
}

describe('directorySas', () => {
  it('names the directory and its depth (sr=d, sdd), carries racwdl without a policy, and is signed as documented', () => {
    for (const [path, depth] of [['lake', 1], ['lake/cat/ns/events', 4]] as const) {
      const { token, expiresAtMs } = directorySas(signer, 'warehouse', path, TTL, NOW);
      const q = new URLSearchParams(token);
      expect(q.get('sr')).toBe('d');
      expect(q.get('sdd')).toBe(String(depth));
      expect(q.get('sp')).toBe('racwdl');
      expect(q.get('si')).toBeNull();
      expect(q.get('spr')).toBe('https');
      expect(q.get('sv')! >= '2020-12-06').toBe(true);
      expect(q.get('st')).toBe('2026-01-15T11:55:00Z');
      expect(q.get('se')).toBe('2026-01-15T12:15:00Z');
      expect(expiresAtMs).toBe(NOW + TTL * 1000);
      expect(q.get('sig')).toBe(expectedSig(q, `/blob/eiderlake/warehouse/${path}`));
    }
  });

  it('bound to a stored access policy: si, no sp of its own, signed with the identifier', () => {
    const q = new URLSearchParams(directorySas(signer, 'warehouse', 'lake/cat/ns/events', TTL, NOW, 'eider-0123456789abcdef-e3').token);
    expect(q.get('si')).toBe('eider-0123456789abcdef-e3');
    expect(q.get('sp')).toBeNull();
    expect(q.get('sr')).toBe('d');
    expect(q.get('sdd')).toBe('4');
    expect(q.get('sig')).toBe(expectedSig(q, '/blob/eiderlake/warehouse/lake/cat/ns/events'));
  });

  it('agrees with @azure/storage-blob\'s own directory SAS where that can sign one (bound to a policy)', () => {
    const ours = new URLSearchParams(directorySas(signer, 'warehouse', 'lake/cat/ns', TTL, NOW, 'pol').token);
    const sdk = new URLSearchParams(
      generateBlobSASQueryParameters(
        { containerName: 'warehouse', blobName: 'lake/cat/ns', isDirectory: true, identifier: 'pol', startsOn: new Date(NOW - 300_000), expiresOn: new Date(NOW + TTL * 1000), protocol: SASProtocol.Https, version: ours.get('sv')! },
        new StorageSharedKeyCredential(signer.accountName, signer.accountKey),
      ).toString(),
    );
    expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(sdk));
  });

  it('leading and trailing slashes give the same token; HTTP is allowed for an emulator endpoint only', () => {
    const plain = directorySas(signer, 'warehouse', 'lake/cat', TTL, NOW).token;
    for (const p of ['lake/cat/', '/lake/cat', '/lake/cat//']) expect(directorySas(signer, 'warehouse', p, TTL, NOW).token).toBe(plain);
    const emulator = new URLSearchParams(directorySas({ ...signer, endpoint: 'http://127.0.0.1:10000/eiderlake' }, 'warehouse', 'lake', TTL, NOW).token);
    expect(emulator.get('spr')).toBe('https,http');
    expect(emulator.get('sig')).toBe(expectedSig(emulator, '/blob/eiderlake/warehouse/lake'));
    for (const bad of ['', '/', 'a//b']) expect(() => directorySas(signer, 'warehouse', bad, TTL, NOW)).toThrow(/not a directory path/);
  });
});
