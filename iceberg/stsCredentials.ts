// Temporary S3 credentials from a store's STS AssumeRole (the Query API: AWS, MinIO, Ceph RGW, Eider's own object
// stores), limited by an inline session policy to one prefix of a bucket. The catalog service vends them (`sts`
// vending, catalog/vending.ts) and the api's probe finds whether a backend offers them (domain/backendStorage.ts).
import { createHash } from 'node:crypto';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { STS_MIN_DURATION_SECONDS } from './stsRules.ts';

/**
 * The inline session policy of an STS credential for one prefix of a bucket: objects under it read, written and
 * deleted (and multipart uploads aborted), and the bucket listed under it only.
 */
export function sessionPolicy(bucket: string, prefix: string): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'],
        Resource: [`arn:aws:s3:::${bucket}/${prefix}*`],
      },
      {
        Effect: 'Allow',
        Action: ['s3:ListBucket'],
        Resource: [`arn:aws:s3:::${bucket}`],
        Condition: { StringLike: { 's3:prefix': [`${prefix}*`] } },
      },
    ],
  });
}

/**
 * The connection an STS vending warehouse is reached with: its endpoint (AWS's when null), region and keys, and the
 * role to assume (AWS STS requires one; MinIO-like stores take none and assume the caller's own identity).
 */
export interface StsTarget {
  endpoint: string | null;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  roleArn?: string | null;
}

export interface StsCredential {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiresAtMs: number;
}

const stsClients = new Map<string, STSClient>();

function stsClientFor(t: StsTarget): STSClient {
  // Keyed by a digest of the connection: the secret itself is no map key.
  const key = createHash('sha256').update([t.endpoint ?? '', t.region, t.accessKeyId, t.secretAccessKey].join('\u0000')).digest('hex');
  let client = stsClients.get(key);
  if (!client) {
    if (stsClients.size >= 64) {
      for (const c of stsClients.values()) c.destroy();
      stsClients.clear();
    }
    client = new STSClient({
      endpoint: t.endpoint || undefined,
      region: t.region || 'us-east-1',
      maxAttempts: 2,
      // A store without STS may not answer POST / at all: a probe or a table load must not hang on it.
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 15_000 },
      credentials: { accessKeyId: t.accessKeyId, secretAccessKey: t.secretAccessKey },
    });
    stsClients.set(key, client);
  }
  return client;
}

/**
 * Temporary credentials from the store's STS AssumeRole, limited by `policy`, living `ttlSeconds` (at least STS's
 * minimum). `RoleArn` is the target's role when it has one (the backend's `role_arn`: AWS STS requires it); without
 * one none is sent: MinIO-like stores assume the caller's own identity and take none (a store that needs one, AWS
 * itself, refuses, and a backend without `role_arn` there is probed to `static`).
 */
export async function assumeRole(t: StsTarget, policy: string, ttlSeconds: number, sessionName: string): Promise<StsCredential> {
  const out = await stsClientFor(t).send(
    new AssumeRoleCommand({
      RoleArn: (t.roleArn || undefined) as string,
      RoleSessionName: sessionName.replace(/[^\w+=,.@-]/g, '-').slice(0, 64) || 'eider',
      DurationSeconds: Math.max(STS_MIN_DURATION_SECONDS, Math.ceil(ttlSeconds)),
      Policy: policy,
    }),
  );
  const c = out.Credentials;
  if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) throw new Error('the STS answer carries no credentials');
  return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiresAtMs: c.Expiration.getTime() };
}
