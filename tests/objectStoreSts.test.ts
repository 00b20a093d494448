// STS vending against a real wire: Eider's object store answers the STS AssumeRole Query API as MinIO does, and the
// official @aws-sdk/client-sts client talks to it. Temporary credentials read and write under the prefix their
// session policy names and are refused (AccessDenied) everywhere else, after expiry (ExpiredToken) and with a
// forged token; AssumeRole refuses what it must. A catalog service whose warehouse vends `sts` on a second store
// (one that verifies no derived key, as a foreign S3-compatible store) hands out such credentials per table, sending
// the warehouse's role_arn as RoleArn (seen at the store); a store set to want a RoleArn (as AWS STS) refuses without.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import {
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCopyCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { startObjectStore, type ObjectStore } from '../runtime/objectStore.ts';
import { issueStsCredentials, parseSessionPolicy, policyAllows, type AssumeRoleRequest } from '../runtime/objectStoreSts.ts';
import { makeS3Client } from '../iceberg/s3Client.ts';
import { sessionPolicy } from '../iceberg/stsCredentials.ts';
import { freshDatabase, type TestDatabase } from './support/database.ts';
import { startCatalogStack, type CatalogStack } from './support/catalogStack.ts';

const ROOT = { accessKey: 'foreign-root', secretKey: 'foreign-root-secret-for-tests' };
const BUCKET = 'foreign';
let dir: string;
let store: ObjectStore;
let root: S3Client;
const clients: Array<{ destroy(): void }> = [];
/** Every AssumeRole the store answered (its RoleArn, session name, duration, policy). */
const assumed: AssumeRoleRequest[] = [];
const ROLE_ARN = 'arn:aws:iam::123456789012:role/eider-vending';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'eider-sts-'));
  // As a foreign S3-compatible store: the root key and STS, no derived keys.
  store = await startObjectStore({ dir, port: 0, bucket: BUCKET, ...ROOT, derivedKeys: false, onAssumeRole: (r) => assumed.push(r) });
  root = makeS3Client({ endpoint: store.endpoint, accessKeyId: ROOT.accessKey, secretAccessKey: ROOT.secretKey });
  clients.push(root);
});
afterAll(async () => {
  for (const c of clients) c.destroy();
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function sts(keys = ROOT): STSClient {
  const c = new STSClient({ endpoint: store.endpoint, region: 'us-east-1', maxAttempts: 1, credentials: { accessKeyId: keys.accessKey, secretAccessKey: keys.secretKey } });
  clients.push(c);
  return c;
}

function s3With(c: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): S3Client {
  const client = makeS3Client({ endpoint: store.endpoint, accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, sessionToken: c.sessionToken, maxAttempts: 1 });
  clients.push(client);
  return client;
}

async function assume(policy?: string, duration = 900) {
  const out = await sts().send(new AssumeRoleCommand({ RoleArn: undefined as unknown as string, RoleSessionName: 'test', DurationSeconds: duration, Policy: policy }));
  const c = out.Credentials!;
  return { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken!, expiration: c.Expiration! };
}

describe('the object store\'s STS AssumeRole', () => {
  it('answers temporary credentials that the session policy limits to one prefix', async () => {
    await root.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'wh/t1/metadata/v1.json', Body: 'one' }));
    await root.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'wh/t2/metadata/v1.json', Body: 'two' }));
    const before = Date.now();
    const c = await assume(sessionPolicy(BUCKET, 'wh/t1/'));
    expect(c.accessKeyId).toMatch(/^EIDS[A-Z2-7]{16}$/);
    expect(c.expiration.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 900_000);
    expect(c.expiration.getTime()).toBeLessThanOrEqual(Date.now() + 900_000);
    const s3 = s3With(c);

    // under the prefix: read, write, list, delete
    expect(await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'wh/t1/metadata/v1.json' }))).Body!.transformToString()).toBe('one');
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'wh/t1/data/a.parquet', Body: 'rows' }));
    await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'wh/t1/data/a.parquet' }));
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'wh/t1/data/' }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual(['wh/t1/data/a.parquet']);
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'wh/t1/data/a.parquet' }));

    // elsewhere: refused
    const denied = { name: 'AccessDenied', message: expect.stringContaining('session policy') };
    await expect(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'wh/t2/metadata/v1.json' }))).rejects.toMatchObject(denied);
    await expect(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'wh/t1-evil/x', Body: 'x' }))).rejects.toMatchObject(denied);
    await expect(s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'wh/t2/metadata/v1.json' }))).rejects.toMatchObject(denied);
    await expect(s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'wh/t2/' }))).rejects.toMatchObject(denied);
    await expect(s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).rejects.toMatchObject(denied);
    expect(await (await root.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'wh/t2/metadata/v1.json' }))).Body!.transformToString()).toBe('two');

    // A copy reads its source, a part copy too: both need the source in the policy.
    await expect(s3.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'wh/t1/data/c.json', CopySource: `${BUCKET}/wh/t2/metadata/v1.json` }))).rejects.toMatchObject(denied);
    const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'wh/t1/data/m.json' }));
    await expect(
      s3.send(new UploadPartCopyCommand({ Bucket: BUCKET, Key: 'wh/t1/data/m.json', UploadId: upload.UploadId, PartNumber: 1, CopySource: `${BUCKET}/wh/t2/metadata/v1.json` })),
    ).rejects.toMatchObject(denied);
    await s3.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'wh/t1/data/c.json', CopySource: `${BUCKET}/wh/t1/metadata/v1.json` }));
  });

  it('refuses temporary credentials after expiry, with a forged or missing token, and a wrong secret', async () => {
    const policy = parseSessionPolicy(sessionPolicy(BUCKET, 'wh/t1/'));
    const expired = issueStsCredentials(ROOT.secretKey, { expiresAt: Math.floor(Date.now() / 1000) - 1, policy, sessionName: 'old' });
    await expect(s3With(expired).send(new GetObjectCommand({ Bucket: BUCKET, Key: 'wh/t1/metadata/v1.json' }))).rejects.toMatchObject({ name: 'ExpiredToken' });

    const c = await assume(sessionPolicy(BUCKET, 'wh/t1/'));
    // a token whose claims were changed (the policy dropped) no longer matches its MAC
    const [v, body, mac] = c.sessionToken.split('.');
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    const forged = [v, Buffer.from(JSON.stringify({ ...claims, pol: null })).toString('base64url'), mac].join('.');
    await expect(s3With({ ...c, sessionToken: forged }).send(new GetObjectCommand({ Bucket: BUCKET, Key: 'wh/t2/metadata/v1.json' }))).rejects.toMatchObject({ name: 'InvalidToken' });
    // another credential's token
    const other = await assume(sessionPolicy(BUCKET, 'wh/t1/'));
    await expect(s3With({ ...c, sessionToken: other.sessionToken }).send(new GetObjectCommand({ Bucket: BUCKET, Key: 'wh/t1/metadata/v1.json' }))).rejects.toMatchObject({ name: 'InvalidToken' });
    await expect(s3With({ accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey }).send(new GetObjectCommand({ Bucket: BUCKET, Key: 'wh/t1/metadata/v1.json' }))).rejects.toMatchObject({ name: 'InvalidToken' });
    await expect(s3With({ ...c, secretAccessKey: 'not-the-secret' }).send(new GetObjectCommand({ Bucket: BUCKET, Key: 'wh/t1/metadata/v1.json' }))).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });
  });

  it('refuses a wrong signature, a key other than the root, a duration out of range, and a policy it does not understand', async () => {
    await expect(sts({ accessKey: ROOT.accessKey, secretKey: 'wrong' }).send(new AssumeRoleCommand({ RoleArn: undefined as unknown as string, RoleSessionName: 's' }))).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });
    const temp = await assume(sessionPolicy(BUCKET, 'wh/t1/'));
    const chained = new STSClient({ endpoint: store.endpoint, region: 'us-east-1', maxAttempts: 1, credentials: temp });
    clients.push(chained);
    await expect(chained.send(new AssumeRoleCommand({ RoleArn: undefined as unknown as string, RoleSessionName: 's' }))).rejects.toMatchObject({ name: 'InvalidClientTokenId' });
    await expect(assume(undefined, 899)).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringContaining('900') });
    await expect(assume(undefined, 43_201)).rejects.toMatchObject({ name: 'ValidationError' });
    // the wire codes are AWS's (MalformedPolicyDocument, PackedPolicyTooLarge): the SDK names their modelled exceptions
    await expect(assume('{not json')).rejects.toMatchObject({ name: 'MalformedPolicyDocumentException' });
    await expect(assume(JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', NotAction: 's3:*', Resource: '*' }] }))).rejects.toMatchObject({ name: 'MalformedPolicyDocumentException' });
    await expect(assume(JSON.stringify({ Statement: [{ Effect: 'Allow', Action: 's3:*', Resource: '*', Condition: { IpAddress: { 'aws:SourceIp': '1.2.3.4' } } }] }))).rejects.toMatchObject({ name: 'MalformedPolicyDocumentException' });
    await expect(assume(JSON.stringify({ Statement: [{ Effect: 'Allow', Action: 's3:*', Resource: 'x'.repeat(2100) }] }))).rejects.toMatchObject({ name: 'PackedPolicyTooLargeException' });
    // without a policy: the root key's rights, still until expiry
    const full = s3With(await assume());
    expect(await (await full.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'wh/t2/metadata/v1.json' }))).Body!.transformToString()).toBe('two');
  });

  it('takes a RoleArn of an IAM role\'s shape (and ignores it, as MinIO does); set to want one, refuses without it as AWS STS does', async () => {
    assumed.length = 0;
    const out = await sts().send(new AssumeRoleCommand({ RoleArn: ROLE_ARN, RoleSessionName: 'with-role', DurationSeconds: 900 }));
    expect(out.Credentials?.SessionToken).toBeTruthy();
    expect(assumed).toEqual([{ roleArn: ROLE_ARN, sessionName: 'with-role', durationSeconds: 900, policy: null }]);
    await expect(sts().send(new AssumeRoleCommand({ RoleArn: 'arn:aws:iam::1:user/x', RoleSessionName: 's' }))).rejects.toMatchObject({ name: 'ValidationError' });

    const awsDir = mkdtempSync(join(tmpdir(), 'eider-sts-aws-'));
    const aws = await startObjectStore({ dir: awsDir, port: 0, bucket: BUCKET, ...ROOT, derivedKeys: false, stsRequireRoleArn: true });
    const client = new STSClient({ endpoint: aws.endpoint, region: 'us-east-1', maxAttempts: 1, credentials: { accessKeyId: ROOT.accessKey, secretAccessKey: ROOT.secretKey } });
    try {
      await expect(client.send(new AssumeRoleCommand({ RoleArn: undefined as unknown as string, RoleSessionName: 's' }))).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringContaining('roleArn') });
      expect((await client.send(new AssumeRoleCommand({ RoleArn: ROLE_ARN, RoleSessionName: 's' }))).Credentials?.AccessKeyId).toMatch(/^EIDS/);
    } finally {
      client.destroy();
      await aws.close();
      rmSync(awsDir, { recursive: true, force: true });
    }
  });

  it('evaluates Allow and Deny with wildcards and string conditions', () => {
    const p = parseSessionPolicy(JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Action: 's3:Get*', Resource: 'arn:aws:s3:::b/p/*' },
        { Effect: 'Deny', Action: ['s3:GetObject'], Resource: 'arn:aws:s3:::b/p/secret*' },
        { Effect: 'Allow', Action: 's3:ListBucket', Resource: 'arn:aws:s3:::b', Condition: { StringLike: { 's3:prefix': ['p/*', 'q/?'] }, StringEquals: { 's3:delimiter': '/' } } },
      ],
    }));
    const need = (action: string, resource: string, context: Record<string, string> = {}) => policyAllows(p, { action, resource, context });
    expect(need('s3:GetObject', 'arn:aws:s3:::b/p/x/y')).toBe(true);
    expect(need('S3:getobject', 'arn:aws:s3:::b/p/x')).toBe(true);
    expect(need('s3:GetObject', 'arn:aws:s3:::b/p/secret.txt')).toBe(false);
    expect(need('s3:PutObject', 'arn:aws:s3:::b/p/x')).toBe(false);
    expect(need('s3:GetObject', 'arn:aws:s3:::b/px')).toBe(false);
    expect(need('s3:ListBucket', 'arn:aws:s3:::b', { 's3:prefix': 'p/a', 's3:delimiter': '/' })).toBe(true);
    expect(need('s3:ListBucket', 'arn:aws:s3:::b', { 's3:prefix': 'q/a', 's3:delimiter': '/' })).toBe(true);
    expect(need('s3:ListBucket', 'arn:aws:s3:::b', { 's3:prefix': 'q/ab', 's3:delimiter': '/' })).toBe(false);
    expect(need('s3:ListBucket', 'arn:aws:s3:::b', { 's3:prefix': 'p/a' })).toBe(false);
    expect(need('s3:ListBucket', 'arn:aws:s3:::b', { 's3:delimiter': '/' })).toBe(false);
  });
});

describe('a catalog warehouse vending sts', () => {
  let tdb: TestDatabase;
  let stack: CatalogStack;
  const VENDED = { 'x-iceberg-access-delegation': 'vended-credentials' };

  beforeAll(async () => {
    tdb = await freshDatabase();
    stack = await startCatalogStack({ db: tdb.db, credentialTtlSeconds: 60 });
    const wh = await stack.request('POST', '/management/v1/warehouses', {
      name: 'stswh', root_uri: `s3://${BUCKET}/stswh/`, endpoint: store.endpoint, region: 'us-east-1',
      access_key_id: ROOT.accessKey, secret_access_key: ROOT.secretKey, path_style: true, vending: 'sts',
    });
    expect(wh.status).toBe(201);
    expect(wh.body).toMatchObject({ vending: 'sts' });
    await stack.request('POST', '/v1/stswh/namespaces', { namespace: ['db'] });
    for (const name of ['t1', 't2']) {
      await stack.request('POST', '/v1/stswh/namespaces/db/tables', { name, schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: false, type: 'long' }] } });
    }
  });
  afterAll(async () => {
    await stack?.close();
    await tdb?.drop();
  });

  const keyOf = (uri: string) => uri.slice(`s3://${BUCKET}/`.length);

  it('vends a session token, key and secret for the table\'s prefix, living at least STS\'s 900 s; never the root secret', async () => {
    const res = await stack.request('GET', '/v1/stswh/namespaces/db/tables/t1', undefined, VENDED);
    expect(res.status).toBe(200);
    const config = res.body.config as Record<string, string>;
    expect(config).toMatchObject({ 's3.endpoint': store.endpoint, 's3.path-style-access': 'true', 's3.access-key-id': expect.stringMatching(/^EIDS/) });
    expect(config['s3.session-token']).toBeTruthy();
    const expires = Number(config['s3.session-token-expires-at-ms']);
    expect(expires).toBeGreaterThan(Date.now() + 890_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 900_000);
    expect(JSON.stringify(res.body, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(ROOT.secretKey);
    expect(res.body['storage-credentials']).toEqual([{ prefix: `${res.body.metadata.location}/`, config }]);

    const s3 = s3With({ accessKeyId: config['s3.access-key-id'], secretAccessKey: config['s3.secret-access-key'], sessionToken: config['s3.session-token'] });
    const meta = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: keyOf(res.body['metadata-location']) }));
    expect(await meta.Body!.transformToString()).toContain(res.body.metadata['table-uuid']);
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${keyOf(res.body.metadata.location)}/data/x.parquet`, Body: 'rows' }));
    const other = await stack.request('GET', '/v1/stswh/namespaces/db/tables/t2');
    await expect(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: keyOf(other.body['metadata-location']) }))).rejects.toMatchObject({ name: 'AccessDenied' });
  });

  it('an STS that refuses answers 503 in the catalog\'s error model, without the secret; an unknown mode is a 400', async () => {
    const wh = await stack.request('POST', '/management/v1/warehouses', {
      name: 'stsbad', root_uri: `s3://${BUCKET}/stsbad/`, endpoint: store.endpoint, region: 'us-east-1',
      access_key_id: ROOT.accessKey, secret_access_key: ROOT.secretKey, path_style: true, vending: 'sts',
    });
    expect(wh.status).toBe(201);
    await stack.request('POST', '/v1/stsbad/namespaces', { namespace: ['db'] });
    const created = await stack.request('POST', '/v1/stsbad/namespaces/db/tables', { name: 't', schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: false, type: 'long' }] } });
    expect(created.status).toBe(200);
    // the store's root secret changed under the warehouse (stored unsealed, as rows from before sealing are read)
    await tdb.db.query(`update catalog.warehouses set secret_access_key = 'not-the-root-secret' where name = 'stsbad'`);
    const res = await stack.request('GET', '/v1/stsbad/namespaces/db/tables/t', undefined, VENDED);
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ type: 'ServiceUnavailableException', code: 503, message: expect.stringContaining('STS AssumeRole failed: SignatureDoesNotMatch') });
    expect(JSON.stringify(res.body)).not.toContain('not-the-root-secret');

    const bad = await stack.request('POST', '/management/v1/warehouses', { name: 'stsx', root_uri: `s3://${BUCKET}/x/`, access_key_id: 'a', secret_access_key: 'b', vending: 'magic' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'BadRequestException', message: expect.stringMatching(/vending\b.*derived.*sts.*static.*sas/) });
  });

  it('a warehouse\'s role_arn: shown back, sent as RoleArn with every vend, cleared with null; refused when malformed or on azure', async () => {
    const wh = await stack.request('POST', '/management/v1/warehouses', {
      name: 'stsrole', root_uri: `s3://${BUCKET}/stsrole/`, endpoint: store.endpoint, region: 'us-east-1',
      access_key_id: ROOT.accessKey, secret_access_key: ROOT.secretKey, path_style: true, vending: 'sts', role_arn: ROLE_ARN,
    });
    expect(wh.status).toBe(201);
    expect(wh.body).toMatchObject({ vending: 'sts', role_arn: ROLE_ARN });
    await stack.request('POST', '/v1/stsrole/namespaces', { namespace: ['db'] });
    await stack.request('POST', '/v1/stsrole/namespaces/db/tables', { name: 't', schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: false, type: 'long' }] } });
    assumed.length = 0;
    expect((await stack.request('GET', '/v1/stsrole/namespaces/db/tables/t', undefined, VENDED)).status).toBe(200);
    expect(assumed).toEqual([expect.objectContaining({ roleArn: ROLE_ARN, sessionName: 'eider-stsrole', policy: expect.stringContaining('stsrole/db/t') })]);

    const bad = await stack.request('PUT', '/management/v1/warehouses/stsrole', { role_arn: 'arn:aws:iam::123:role/x' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'BadRequestException', message: expect.stringContaining('role_arn') });
    const az = await stack.request('POST', '/management/v1/warehouses', { name: 'azrole', kind: 'azure', root_uri: 'az://c/x/', access_key_id: 'acct', secret_access_key: 'a2V5', role_arn: ROLE_ARN });
    expect(az.status).toBe(400);

    const cleared = await stack.request('PUT', '/management/v1/warehouses/stsrole', { role_arn: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.role_arn).toBeNull();
    assumed.length = 0;
    expect((await stack.request('GET', '/v1/stsrole/namespaces/db/tables/t', undefined, VENDED)).status).toBe(200);
    expect(assumed).toEqual([expect.objectContaining({ roleArn: null, sessionName: 'eider-stsrole' })]);
  });
});
