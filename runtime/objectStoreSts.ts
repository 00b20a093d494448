// STS for the bundled object store, the way MinIO offers it: the AssumeRole Query API on the S3 endpoint (POST `/`
// with `Action=AssumeRole&Version=2011-06-15`, SigV4-signed for service `sts` with the store's root key) answers
// temporary credentials, and every S3 request made with them is held to their expiry and their inline session policy.
//
// Stateless, like the derived keys of runtime/objectStore.ts: the session token carries the claims (access key id,
// expiry, policy) and an HMAC over them keyed from the store's signing secret; the temporary secret is an HMAC of the
// access key id. Changing the signing secret invalidates every temporary credential; nothing else revokes one before
// it expires (as with MinIO or AWS, whose STS credentials the catalog service cannot revoke either).
//
// The session policy evaluator covers IAM's policy grammar as far as session policies for object storage need it:
// statements with Effect Allow or Deny, Action and Resource as a string or a list with `*` and `?` wildcards, and
// Condition operators StringEquals, StringNotEquals, StringLike and StringNotLike on request keys (`s3:prefix`,
// `s3:delimiter`, `s3:max-keys`). A policy with anything else (Principal, NotAction, NotResource, other operators) is
// refused at AssumeRole as MalformedPolicyDocument, never half-understood. An explicit Deny wins, then any Allow,
// else the request is denied; a condition on a key the request does not carry does not hold.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { isRoleArn, STS_MAX_DURATION_SECONDS, STS_MIN_DURATION_SECONDS } from '../iceberg/stsRules.ts';

// ---------------------------------------------------------------------------------------------------------------
// Temporary credentials

/** Access key ids of temporary credentials start with this (AWS uses ASIA, MinIO random upper-case letters). */
const STS_KEY_PREFIX = 'EIDS';
const TOKEN_VERSION = 'eids1';
const STS_DEFAULT_DURATION = 3600;
/** AWS's limit on an inline session policy (characters). */
const MAX_POLICY_CHARS = 2048;

export interface StsClaims {
  accessKeyId: string;
  /** epoch seconds */
  expiresAt: number;
  /** The inline session policy, parsed; null: no policy (the root key's rights). */
  policy: SessionPolicy | null;
  sessionName: string;
}

export interface StsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiresAt: number;
}

const tokenKey = (signingSecret: string) => createHmac('sha256', signingSecret).update('eider-sts-token').digest();
const secretKey = (signingSecret: string) => createHmac('sha256', signingSecret).update('eider-sts-secret').digest();

export const isStsKeyId = (accessKeyId: string) => accessKeyId.startsWith(STS_KEY_PREFIX);

/** The secret of a temporary access key id. */
function stsSecret(signingSecret: string, accessKeyId: string): string {
  return createHmac('sha256', secretKey(signingSecret)).update(accessKeyId).digest('base64url');
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Issues temporary credentials (what AssumeRole answers); exported so that tests can mint expired ones. */
export function issueStsCredentials(signingSecret: string, claims: Omit<StsClaims, 'accessKeyId'>): StsCredentials {
  const accessKeyId = STS_KEY_PREFIX + [...randomBytes(16)].map((b) => BASE32[b & 31]).join('');
  const body = Buffer.from(JSON.stringify({ ak: accessKeyId, exp: claims.expiresAt, pol: claims.policy, sn: claims.sessionName })).toString('base64url');
  const payload = `${TOKEN_VERSION}.${body}`;
  const mac = createHmac('sha256', tokenKey(signingSecret)).update(payload).digest('base64url');
  return { accessKeyId, secretAccessKey: stsSecret(signingSecret, accessKeyId), sessionToken: `${payload}.${mac}`, expiresAt: claims.expiresAt };
}

/** The claims of a session token issued for `accessKeyId` by this signing secret, or undefined. */
function verifySessionToken(signingSecret: string, accessKeyId: string, token: string): StsClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== TOKEN_VERSION) return undefined;
  const want = createHmac('sha256', tokenKey(signingSecret)).update(`${parts[0]}.${parts[1]}`).digest();
  const given = Buffer.from(parts[2], 'base64url');
  if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
  try {
    const c = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    if (c.ak !== accessKeyId || typeof c.exp !== 'number' || typeof c.sn !== 'string') return undefined;
    return { accessKeyId: c.ak, expiresAt: c.exp, policy: c.pol ?? null, sessionName: c.sn };
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Session policies

type Operator = 'StringEquals' | 'StringNotEquals' | 'StringLike' | 'StringNotLike';
const OPERATORS: readonly Operator[] = ['StringEquals', 'StringNotEquals', 'StringLike', 'StringNotLike'];

interface Statement {
  effect: 'Allow' | 'Deny';
  actions: string[];
  resources: string[];
  conditions: Array<{ op: Operator; key: string; values: string[] }>;
}

export interface SessionPolicy {
  statements: Statement[];
}

class PolicyError extends Error {}

const stringList = (v: unknown, what: string): string[] => {
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.length === 0 || !list.every((x) => typeof x === 'string')) throw new PolicyError(`${what} must be a string or a list of strings`);
  return list as string[];
};

/** Parses an inline session policy; throws PolicyError for anything the evaluator does not understand. */
export function parseSessionPolicy(json: string): SessionPolicy {
  if (json.length > MAX_POLICY_CHARS) throw new PolicyError(`the session policy has ${json.length} characters, more than ${MAX_POLICY_CHARS}`);
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    throw new PolicyError('the session policy is not JSON');
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new PolicyError('the session policy must be a JSON object');
  const d = doc as Record<string, unknown>;
  for (const k of Object.keys(d)) if (k !== 'Version' && k !== 'Statement' && k !== 'Id') throw new PolicyError(`unsupported policy element ${k}`);
  if (d.Version !== undefined && d.Version !== '2012-10-17' && d.Version !== '2008-10-17') throw new PolicyError('Version must be 2012-10-17');
  const raw = Array.isArray(d.Statement) ? d.Statement : d.Statement && typeof d.Statement === 'object' ? [d.Statement] : undefined;
  if (!raw) throw new PolicyError('Statement is required');
  const statements = raw.map((st: unknown): Statement => {
    if (!st || typeof st !== 'object' || Array.isArray(st)) throw new PolicyError('a statement must be an object');
    const s = st as Record<string, unknown>;
    for (const k of Object.keys(s)) {
      if (!['Sid', 'Effect', 'Action', 'Resource', 'Condition'].includes(k)) throw new PolicyError(`unsupported statement element ${k}`);
    }
    if (s.Effect !== 'Allow' && s.Effect !== 'Deny') throw new PolicyError('Effect must be Allow or Deny');
    const conditions: Statement['conditions'] = [];
    if (s.Condition !== undefined) {
      if (!s.Condition || typeof s.Condition !== 'object' || Array.isArray(s.Condition)) throw new PolicyError('Condition must be an object');
      for (const [op, block] of Object.entries(s.Condition as Record<string, unknown>)) {
        if (!OPERATORS.includes(op as Operator)) throw new PolicyError(`unsupported condition operator ${op}`);
        if (!block || typeof block !== 'object' || Array.isArray(block)) throw new PolicyError(`condition ${op} must be an object`);
        for (const [key, values] of Object.entries(block as Record<string, unknown>)) {
          conditions.push({ op: op as Operator, key: key.toLowerCase(), values: stringList(values, `condition ${op} ${key}`) });
        }
      }
    }
    return { effect: s.Effect, actions: stringList(s.Action, 'Action'), resources: stringList(s.Resource, 'Resource'), conditions };
  });
  return { statements };
}

/** IAM wildcards: `*` any run of characters (slashes too), `?` one character. */
function globMatch(pattern: string, value: string, ignoreCase = false): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[\\s\\S]*').replace(/\?/g, '[\\s\\S]')}$`, ignoreCase ? 'i' : '');
  return re.test(value);
}

/** One permission a request needs: an action on a resource, with the request's condition keys (lower-case). */
export interface Need {
  action: string;
  resource: string;
  context: Record<string, string>;
}

function conditionHolds(c: Statement['conditions'][number], context: Record<string, string>): boolean {
  const v = context[c.key];
  if (v === undefined) return c.op === 'StringNotEquals' || c.op === 'StringNotLike';
  switch (c.op) {
    case 'StringEquals':
      return c.values.includes(v);
    case 'StringNotEquals':
      return !c.values.includes(v);
    case 'StringLike':
      return c.values.some((p) => globMatch(p, v));
    case 'StringNotLike':
      return !c.values.some((p) => globMatch(p, v));
  }
}

const applies = (s: Statement, n: Need) =>
  s.actions.some((a) => globMatch(a, n.action, true)) && s.resources.some((r) => globMatch(r, n.resource)) && s.conditions.every((c) => conditionHolds(c, n.context));

/** Whether a session policy allows one need: an explicit Deny wins, then an Allow; nothing matching is a deny. */
export function policyAllows(p: SessionPolicy, n: Need): boolean {
  if (p.statements.some((s) => s.effect === 'Deny' && applies(s, n))) return false;
  return p.statements.some((s) => s.effect === 'Allow' && applies(s, n));
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1).replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

/** A copy source (`x-amz-copy-source`) as s3rver reads it: decodeURI, one leading slash, bucket then key. */
export function copySourceOf(header: string): { bucket: string; key: string } {
  let source: string;
  try {
    source = decodeURI(header);
  } catch {
    source = header;
  }
  source = source.startsWith('/') ? source.slice(1) : source;
  const [bucket, ...key] = source.split('/');
  return { bucket, key: key.join('/') };
}

/** The permissions an S3 request (path-style, as the bundled store serves them) needs, in IAM's action names. */
function s3Needs(method: string, url: URL, headers: IncomingMessage['headers']): Need[] {
  const segments = url.pathname.split('/');
  const bucket = decodeURIComponent(segments[1] ?? '');
  const key = segments.slice(2).map(decodeURIComponent).join('/');
  const q = url.searchParams;
  const sub = ['uploads', 'uploadId', 'acl', 'tagging', 'delete', 'versions', 'location', 'policy', 'cors', 'lifecycle', 'website', 'versioning', 'notification', 'logging', 'encryption', 'retention', 'legal-hold', 'attributes', 'restore', 'select'].find((s) => q.has(s));
  if (!bucket) return [{ action: 's3:ListAllMyBuckets', resource: '*', context: {} }];
  const bucketArn = `arn:aws:s3:::${bucket}`;
  if (key) {
    const resource = `${bucketArn}/${key}`;
    const one = (action: string): Need => ({ action, resource, context: {} });
    if (method === 'GET' || method === 'HEAD') {
      if (!sub) return [one('s3:GetObject')];
      if (sub === 'uploadId') return [one('s3:ListMultipartUploadParts')];
      return [one(`s3:GetObject${cap(sub)}`)];
    }
    if (method === 'PUT') {
      if (sub && sub !== 'uploadId') return [one(`s3:PutObject${cap(sub)}`)];
      const needs = [one('s3:PutObject')];
      // CopyObject and UploadPartCopy (a part of an upload) read their source: reading it must be allowed too.
      const source = headers['x-amz-copy-source'];
      if (source !== undefined) {
        const from = copySourceOf(Array.isArray(source) ? source.join(',') : source);
        needs.push({ action: 's3:GetObject', resource: `arn:aws:s3:::${from.bucket}/${from.key}`, context: {} });
      }
      return needs;
    }
    if (method === 'POST') return [one(sub === 'uploads' || sub === 'uploadId' ? 's3:PutObject' : `s3:PostObject${cap(sub ?? 'unknown')}`)];
    if (method === 'DELETE') {
      if (sub === 'uploadId') return [one('s3:AbortMultipartUpload')];
      return [one(sub ? `s3:DeleteObject${cap(sub)}` : 's3:DeleteObject')];
    }
    return [one(`s3:${method}Object`)];
  }
  const context: Record<string, string> = {};
  for (const k of ['prefix', 'delimiter', 'max-keys']) {
    const v = q.get(k);
    if (v !== null) context[`s3:${k}`] = v;
  }
  const on = (action: string, ctx: Record<string, string> = {}): Need => ({ action, resource: bucketArn, context: ctx });
  if (method === 'GET' || method === 'HEAD') {
    if (!sub) return [on('s3:ListBucket', context)];
    if (sub === 'uploads') return [on('s3:ListBucketMultipartUploads', context)];
    if (sub === 'versions') return [on('s3:ListBucketVersions', context)];
    if (sub === 'location') return [on('s3:GetBucketLocation')];
    return [on(`s3:GetBucket${cap(sub)}`)];
  }
  // DeleteObjects names its keys in the body, which is not read here: it is allowed only when s3:DeleteObject is
  // allowed for every key of the bucket (a prefix-scoped credential deletes one object at a time).
  if (method === 'POST' && sub === 'delete') return [{ action: 's3:DeleteObject', resource: `${bucketArn}/*`, context: {} }];
  if (method === 'PUT') return [on(sub ? `s3:PutBucket${cap(sub)}` : 's3:CreateBucket')];
  if (method === 'DELETE') return [on(sub ? `s3:DeleteBucket${cap(sub)}` : 's3:DeleteBucket')];
  return [on(`s3:${method}Bucket`)];
}

// ---------------------------------------------------------------------------------------------------------------
// Requests made with temporary credentials

export type StsCheck = { ok: true; secret: string } | { ok: false; status: number; code: string; message: string };

/** Whether a request signed with temporary access key `accessKeyId` may go on to s3rver (then with the secret to verify). */
export function checkStsRequest(signingSecret: string, accessKeyId: string, req: IncomingMessage, url: URL, nowMs = Date.now()): StsCheck {
  const header = req.headers['x-amz-security-token'];
  const token = (typeof header === 'string' ? header : undefined) ?? url.searchParams.get('X-Amz-Security-Token') ?? undefined;
  if (!token) return { ok: false, status: 403, code: 'InvalidToken', message: 'A temporary credential needs its session token (x-amz-security-token).' };
  const claims = verifySessionToken(signingSecret, accessKeyId, token);
  if (!claims) return { ok: false, status: 403, code: 'InvalidToken', message: 'The provided token is malformed or otherwise invalid.' };
  if (claims.expiresAt * 1000 <= nowMs) {
    return { ok: false, status: 400, code: 'ExpiredToken', message: `The provided token has expired (at ${new Date(claims.expiresAt * 1000).toISOString()}).` };
  }
  if (claims.policy) {
    for (const need of s3Needs(req.method ?? 'GET', url, req.headers)) {
      if (!policyAllows(claims.policy, need)) {
        return { ok: false, status: 403, code: 'AccessDenied', message: `The session policy does not allow ${need.action} on ${need.resource}.` };
      }
    }
  }
  return { ok: true, secret: stsSecret(signingSecret, accessKeyId) };
}

// ---------------------------------------------------------------------------------------------------------------
// The AssumeRole endpoint

const STS_NS = 'https://sts.amazonaws.com/doc/2011-06-15/';
const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function stsReply(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/xml', 'content-length': Buffer.byteLength(body), 'x-amzn-requestid': randomUUID() });
  res.end(body);
}

function stsError(res: ServerResponse, status: number, code: string, message: string): void {
  const type = status >= 500 ? 'Receiver' : 'Sender';
  stsReply(res, status, `<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse xmlns="${STS_NS}"><Error><Type>${type}</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`);
}

/** Whether a request is for the STS Query API (which the S3 API never serves: POST on the service root). */
export const isStsRequest = (req: IncomingMessage, url: URL) => req.method === 'POST' && url.pathname === '/';

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

const sha256hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Verifies a SigV4 header signature for service `sts` with the root key; returns why not, or undefined. */
function sigV4Problem(req: IncomingMessage, url: URL, body: Buffer, rootAccessKey: string, rootSecret: string, nowMs: number): { code: string; message: string } | undefined {
  const auth = req.headers.authorization ?? '';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=([^,]+),\s*Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return { code: 'MissingAuthenticationToken', message: 'Sign the request with AWS Signature Version 4 (header authorization).' };
  const [, accessKeyId, date, region, service, signedHeaders, signature] = m;
  if (service !== 'sts') return { code: 'SignatureDoesNotMatch', message: `The credential scope names service ${service}, not sts.` };
  const given = Buffer.from(accessKeyId);
  const root = Buffer.from(rootAccessKey);
  if (given.length !== root.length || !timingSafeEqual(given, root)) {
    return { code: 'InvalidClientTokenId', message: 'The security token included in the request is invalid: only the store\'s root key may assume a role.' };
  }
  const amzDate = req.headers['x-amz-date'];
  if (typeof amzDate !== 'string' || !/^\d{8}T\d{6}Z$/.test(amzDate) || amzDate.slice(0, 8) !== date) {
    return { code: 'IncompleteSignature', message: 'x-amz-date is missing or does not match the credential scope.' };
  }
  const at = Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15));
  if (Math.abs(nowMs - at) > 15 * 60_000) return { code: 'SignatureDoesNotMatch', message: 'Signature expired: the request time is more than 15 minutes from the server time.' };
  const names = signedHeaders.split(';');
  if (!names.includes('host')) return { code: 'IncompleteSignature', message: 'The host header must be signed.' };
  const canonicalHeaders = names
    .map((n) => {
      const v = req.headers[n];
      const value = Array.isArray(v) ? v.join(',') : (v ?? '');
      return `${n}:${String(value).trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
  const query = [...url.searchParams.entries()]
    .map(([k, v]) => [rfc3986(k), rfc3986(v)])
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const payloadHeader = req.headers['x-amz-content-sha256'];
  const payloadHash = typeof payloadHeader === 'string' ? payloadHeader : sha256hex(body);
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256hex(body)) return { code: 'SignatureDoesNotMatch', message: 'The body does not match x-amz-content-sha256.' };
  const canonical = [req.method, url.pathname, query, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${rootSecret}`, date), region), service), 'aws4_request');
  const want = Buffer.from(createHmac('sha256', key).update(toSign).digest('hex'));
  if (!timingSafeEqual(want, Buffer.from(signature))) {
    return { code: 'SignatureDoesNotMatch', message: 'The request signature we calculated does not match the signature you provided.' };
  }
  return undefined;
}

/** What an AssumeRole asked for (StsServeOptions.onAssumeRole): no secret, the policy as sent. */
export interface AssumeRoleRequest {
  roleArn: string | null;
  sessionName: string;
  durationSeconds: number;
  policy: string | null;
}

export interface StsServeOptions {
  rootAccessKey: string;
  rootSecret: string;
  signingSecret: string;
  /**
   * Refuse an AssumeRole without RoleArn as AWS STS does (ValidationError). By default none is needed, as with
   * MinIO, which assumes the caller's own identity; a RoleArn given is checked for an IAM role ARN's shape and
   * otherwise ignored (the store has no roles: the root key's rights, narrowed by the session policy).
   */
  requireRoleArn?: boolean;
  /** Told of every AssumeRole that is answered with credentials (tests observe what a client sent). */
  onAssumeRole?: (r: AssumeRoleRequest) => void;
}

/**
 * Serves one STS Query API request: AssumeRole only, signed with the root key. Temporary credentials cannot assume
 * a role (no chaining) and derived keys have no STS.
 */
export async function serveSts(req: IncomingMessage, res: ServerResponse, url: URL, opts: StsServeOptions): Promise<void> {
  const body = await readBody(req, 64 * 1024);
  if (!body) return stsError(res, 400, 'InvalidParameterValue', 'The request body is larger than 64 KiB.');
  const nowMs = Date.now();
  const problem = sigV4Problem(req, url, body, opts.rootAccessKey, opts.rootSecret, nowMs);
  if (problem) return stsError(res, 403, problem.code, problem.message);
  const params = new URLSearchParams(url.search);
  const type = req.headers['content-type'] ?? '';
  if (/^application\/x-www-form-urlencoded/i.test(type)) for (const [k, v] of new URLSearchParams(body.toString('utf8'))) params.set(k, v);
  const action = params.get('Action');
  if (action !== 'AssumeRole') return stsError(res, 400, 'InvalidAction', `Could not find operation ${action ?? '(none)'} for version ${params.get('Version') ?? '(none)'}: this STS offers AssumeRole.`);
  if (params.get('Version') !== '2011-06-15') return stsError(res, 400, 'InvalidAction', 'Version must be 2011-06-15.');
  const durationText = params.get('DurationSeconds');
  const duration = durationText === null ? STS_DEFAULT_DURATION : Number(durationText);
  if (!Number.isInteger(duration) || duration < STS_MIN_DURATION_SECONDS || duration > STS_MAX_DURATION_SECONDS) {
    return stsError(res, 400, 'ValidationError', `1 validation error detected: Value at 'durationSeconds' failed to satisfy constraint: Member must have value between ${STS_MIN_DURATION_SECONDS} and ${STS_MAX_DURATION_SECONDS}`);
  }
  const roleArn = params.get('RoleArn') || null;
  if (roleArn === null && opts.requireRoleArn) {
    return stsError(res, 400, 'ValidationError', "1 validation error detected: Value null at 'roleArn' failed to satisfy constraint: Member must not be null");
  }
  if (roleArn !== null && !isRoleArn(roleArn)) {
    return stsError(res, 400, 'ValidationError', `${roleArn.slice(0, 100)} is invalid: a RoleArn is arn:<partition>:iam::<account id>:role/<name>`);
  }
  const sessionName = params.get('RoleSessionName') ?? 'eider';
  if (!/^[\w+=,.@-]{1,64}$/.test(sessionName)) return stsError(res, 400, 'ValidationError', 'RoleSessionName must be 1-64 characters of letters, digits and +=,.@_-');
  let policy: SessionPolicy | null = null;
  const policyText = params.get('Policy');
  if (policyText) {
    try {
      policy = parseSessionPolicy(policyText);
    } catch (e) {
      if (!(e instanceof PolicyError)) throw e;
      const code = policyText.length > MAX_POLICY_CHARS ? 'PackedPolicyTooLarge' : 'MalformedPolicyDocument';
      return stsError(res, 400, code, e.message);
    }
  }
  const expiresAt = Math.floor(nowMs / 1000) + duration;
  const c = issueStsCredentials(opts.signingSecret, { expiresAt, policy, sessionName });
  opts.onAssumeRole?.({ roleArn, sessionName, durationSeconds: duration, policy: policyText || null });
  const requestId = randomUUID();
  stsReply(
    res,
    200,
    `<?xml version="1.0" encoding="UTF-8"?>\n<AssumeRoleResponse xmlns="${STS_NS}"><AssumeRoleResult>` +
      `<Credentials><AccessKeyId>${c.accessKeyId}</AccessKeyId><SecretAccessKey>${xmlEscape(c.secretAccessKey)}</SecretAccessKey>` +
      `<SessionToken>${xmlEscape(c.sessionToken)}</SessionToken><Expiration>${new Date(expiresAt * 1000).toISOString()}</Expiration></Credentials>` +
      `<AssumedRoleUser><Arn>arn:aws:sts::000000000000:assumed-role/eider/${xmlEscape(sessionName)}</Arn><AssumedRoleId>${c.accessKeyId}:${xmlEscape(sessionName)}</AssumedRoleId></AssumedRoleUser>` +
      `</AssumeRoleResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
  );
}
