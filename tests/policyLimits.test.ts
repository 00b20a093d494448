// Bounded policy work: huge or many-statement SQL gets a clear 4xx, and parsing runs off the api's event loop
// within a time budget, so one submission cannot stall other requests (or agents' heartbeats).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupAdmin, startTestApi, type Caller, type TestApi } from './support/api.ts';

let t: TestApi;
let admin: Caller;
const AGENT = '00000000-0000-4000-8000-0000000000aa'; // the policy answers before any agent is looked up

beforeAll(async () => {
  t = await startTestApi({ BODY_LIMIT_BYTES: '2000000', SQL_MAX_BYTES: '262144', SQL_MAX_STATEMENTS: '100', SQL_POLICY_TIME_BUDGET_MS: '300' });
  admin = await setupAdmin(t);
});
afterAll(async () => t?.close());

const submit = (sql: string) => t.req('POST', '/api/workspaces/default/queries', { body: { sql, agent_id: AGENT }, as: admin });

describe('statement policy limits', () => {
  it('a 900 KB script is 413 at once; too many statements is 422', async () => {
    const t0 = Date.now();
    const big = await submit('SELECT 1;'.repeat(100_000));
    expect({ status: big.status, error: big.body.error }).toEqual({ status: 413, error: 'payload_too_large' });
    expect(big.body.message).toMatch(/SQL_MAX_BYTES/);
    expect(Date.now() - t0).toBeLessThan(3_000);
    const many = await submit('SELECT 1;'.repeat(101));
    expect({ status: many.status, error: many.body.error }).toEqual({ status: 422, error: 'unprocessable_content' });
    expect(many.body.message).toMatch(/101 statements; at most 100/);
  });

  it('parsing runs off the event loop within its budget: other requests are answered meanwhile', async () => {
    // ~150 KB, one statement: seconds of parsing, well past the 300 ms budget
    const heavy = 'SELECT ' + Array.from({ length: 20_000 }, (_, i) => `a${i}`).join(', ') + ' FROM t';
    const t0 = Date.now();
    const pending = submit(heavy);
    // Time for the request to reach the policy worker (nothing outside marks that it has); the probes then overlap
    // seconds of parsing, and the elapsed-time check below shows the parse did run meanwhile.
    await new Promise((r) => setTimeout(r, 100));
    const probes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const p0 = Date.now();
      expect((await t.req('GET', '/api/healthz')).status).toBeLessThan(500);
      probes.push(Date.now() - p0);
    }
    const r = await pending;
    expect({ status: r.status, error: r.body.error }).toEqual({ status: 422, error: 'unprocessable_content' });
    expect(r.body.message).toMatch(/within 300 ms/);
    expect(Date.now() - t0).toBeLessThan(2_500);
    expect(Math.max(...probes)).toBeLessThan(250);
    // the pool recovers: a small statement is judged normally afterwards
    const after = await submit('SELECT * FRM t');
    expect(after.body.error).toBe('sql_syntax_error');
  });
});
