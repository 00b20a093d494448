import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { parseRange, startResultServer, type ResultServer } from './resultServer.ts';

const TOKEN = 'agent-session-token-123';
let dir: string;
let server: ResultServer;
let token: string | null = TOKEN;
const id = randomUUID();
const content = Buffer.from('0123456789abcdefghij'); // 20 bytes
const url = (path = `/results/${id}.parquet`) => `http://127.0.0.1:${server.port}${path}`;
const auth = (t = TOKEN) => ({ authorization: `Bearer ${t}` });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'eider-results-'));
  await writeFile(join(dir, `${id}.parquet`), content);
  server = await startResultServer({ resultsDir: dir, host: '127.0.0.1', port: 0, sessionToken: () => token, logger: pino({ level: 'silent' }) });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('result server (real HTTP)', () => {
  it('serves the whole file to the bearer of the session token', async () => {
    const res = await fetch(url(), { headers: auth() });
    expect(res.status).toBe(200);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-length')).toBe('20');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(content);
  });

  it('refuses missing, wrong and not-yet-issued tokens with 401', async () => {
    expect((await fetch(url())).status).toBe(401);
    const wrong = await fetch(url(), { headers: auth('agent-session-token-124') });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: 'unauthorized' });
    expect((await fetch(url(), { headers: { authorization: `Basic ${TOKEN}` } })).status).toBe(401);
    token = null;
    try {
      expect((await fetch(url(), { headers: auth() })).status).toBe(401);
    } finally {
      token = TOKEN;
    }
  });

  it('answers byte ranges: a-b, a-, suffix -n, and 416 when unsatisfiable', async () => {
    const r1 = await fetch(url(), { headers: { ...auth(), range: 'bytes=2-5' } });
    expect(r1.status).toBe(206);
    expect(r1.headers.get('content-range')).toBe('bytes 2-5/20');
    expect(await r1.text()).toBe('2345');
    const r2 = await fetch(url(), { headers: { ...auth(), range: 'bytes=15-' } });
    expect(r2.status).toBe(206);
    expect(await r2.text()).toBe('fghij');
    const r3 = await fetch(url(), { headers: { ...auth(), range: 'bytes=-3' } });
    expect(r3.status).toBe(206);
    expect(r3.headers.get('content-range')).toBe('bytes 17-19/20');
    expect(await r3.text()).toBe('hij');
    const r4 = await fetch(url(), { headers: { ...auth(), range: 'bytes=10-999' } });
    expect(r4.headers.get('content-range')).toBe('bytes 10-19/20');
    expect(await r4.text()).toBe('abcdefghij');
    const r5 = await fetch(url(), { headers: { ...auth(), range: 'bytes=20-' } });
    expect(r5.status).toBe(416);
    expect(r5.headers.get('content-range')).toBe('bytes */20');
    const r6 = await fetch(url(), { headers: { ...auth(), range: 'bytes=-0' } });
    expect(r6.status).toBe(416);
  });

  it('answers HEAD with headers only, 404 for unknown or malformed ids, 405 for other methods', async () => {
    const head = await fetch(url(), { method: 'HEAD', headers: auth() });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('20');
    expect(await head.text()).toBe('');
    const headRange = await fetch(url(), { method: 'HEAD', headers: { ...auth(), range: 'bytes=0-0' } });
    expect(headRange.status).toBe(206);
    expect(headRange.headers.get('content-length')).toBe('1');
    expect((await fetch(url(`/results/${randomUUID()}.parquet`), { headers: auth() })).status).toBe(404);
    expect((await fetch(url('/results/..%2F..%2Fetc%2Fpasswd.parquet'), { headers: auth() })).status).toBe(404);
    expect((await fetch(url(), { method: 'DELETE', headers: auth() })).status).toBe(405);
  });

  it('parseRange ignores malformed and multi-range headers', () => {
    expect(parseRange(undefined, 10)).toBeNull();
    expect(parseRange('bytes=0-1,3-4', 10)).toBeNull();
    expect(parseRange('items=0-1', 10)).toBeNull();
    expect(parseRange('bytes=5-2', 10)).toBeNull();
    expect(parseRange('bytes=-20', 10)).toEqual({ start: 0, end: 9 });
  });
});

