// A session's end revokes its staging key and deletes its staged files (the sqlSession actor's removeStaging effect):
// on the bundled store that needs the catalog service (the warehouse's credential epoch, the revocation) and the
// object store (the deletion). With either of them down when the session closes, the session still reads closed at
// once, and the removal waits for the part: once it is back, the files go and the session's URLs are refused. The
// outage outlasts the host's retries of an ordinary effect (5 failures, 100–800 ms apart: about 1.5 s) several times
// over; an ordinary effect is given up after them, and with it the revocation and the files (nothing else removes
// them: the staging sweep is for URLs a store cannot revoke).
import { describe, expect, it } from 'vitest';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { Outage } from './support/catalogStack.ts';
import { stackWithAgent } from './support/stackWithAgent.ts';

/** How long the part stays down after the session closed: four times the host's retries of an ordinary effect. */
const OUTAGE_MS = 6_000;

const { t, admin, agentId } = await stackWithAgent({
  env: { SQL_SESSIONS_ENABLED: 'true', SQL_SESSION_REAPER_TICK_S: '0.2' },
  agent: { name: 'staging-outage' },
});

const stagedKeys = async (uri: string) => {
  const u = new URL(uri);
  const out = await t.stack.s3.send(new ListObjectsV2Command({ Bucket: u.host, Prefix: u.pathname.slice(1) }));
  return (out.Contents ?? []).map((o) => o.Key!);
};

/** A session on the bundled catalog with one staged file put; its staging URI and the file's put URL. */
async function sessionWithAFile() {
  const open = await t.req('POST', '/api/workspaces/default/sql/sessions', { as: admin, body: { agent_id: agentId, catalog: 'warehouse', wait_timeout_s: 30 } });
  expect(open.status, open.text).toBe(201);
  const session = open.body as { id: string; staging_uri: string };
  const staged = await t.req('POST', `/api/sql/sessions/${session.id}/staging-files`, { as: admin, body: { files: ['in.csv'] } });
  expect(staged.status, staged.text).toBe(201);
  const putUrl = staged.body.files[0].put_url as string;
  expect((await fetch(putUrl, { method: 'PUT', body: 'id\n1\n' })).status).toBe(200);
  expect(await stagedKeys(session.staging_uri)).toHaveLength(1);
  return { ...session, putUrl };
}

/** Closes the session while `stop`'s part is down; once it is back, the staging area is removed. */
async function closeDuring(stop: () => Promise<Outage>, whileDown: (s: { staging_uri: string }) => Promise<void>) {
  const session = await sessionWithAFile();
  const outage = await stop();
  try {
    // The client has its answer and the session its end, the part down or not.
    expect((await t.req('DELETE', `/api/sql/sessions/${session.id}`, { as: admin })).status).toBe(204);
    await expect.poll(async () => (await t.req('GET', `/api/sql/sessions/${session.id}`, { as: admin })).body.status, { timeout: 15_000 }).toBe('closed');
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await whileDown(session);
  } finally {
    await outage.end();
  }
  await expect.poll(() => stagedKeys(session.staging_uri), { timeout: 30_000, interval: 250 }).toEqual([]);
  expect((await fetch(session.putUrl, { method: 'PUT', body: 'id\n2\n' })).status).toBe(403);
  expect(await stagedKeys(session.staging_uri)).toEqual([]);
  // Closed by its client, as it was asked: not failed by the effect that waited.
  const after = (await t.req('GET', `/api/sql/sessions/${session.id}`, { as: admin })).body;
  expect(after).toMatchObject({ status: 'closed', close_reason: 'client', error: null });
}

describe('a session closed while a part its staging removal needs is down', () => {
  it('the catalog service: the files stay until it is back, then the key is revoked and they go', { timeout: 120_000 }, async () => {
    await closeDuring(
      () => t.stack.stopCatalog(),
      // Nothing is deleted before the key is revoked (a put through it could land after the deletion otherwise).
      async (s) => expect(await stagedKeys(s.staging_uri)).toHaveLength(1),
    );
  });

  it('the object store: once it is back the files go and the URLs are refused', { timeout: 120_000 }, async () => {
    await closeDuring(
      () => t.stack.stopStore(),
      async () => undefined,
    );
  });
});
