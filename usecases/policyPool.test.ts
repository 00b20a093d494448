// The statement policy off the event loop, and its cache of allowed verdicts: a repeated statement gets the same
// verdict, a copy of it (what one caller changes never reaches the next), and refusals are decided every time.
import { describe, expect, it } from 'vitest';
import { checkPolicyOffThread } from './policyPool.ts';

const opts = { mode: 'query' as const, maxStatements: 100 };

describe('checkPolicyOffThread', () => {
  it('answers a repeated allowed statement with an equal, separate verdict', async () => {
    const sql = 'SELECT a, b FROM s.t WHERE a > 1';
    const first = await checkPolicyOffThread(sql, opts, 5_000);
    expect(first.ok).toBe(true);
    const second = await checkPolicyOffThread(sql, opts, 5_000);
    expect(second).toEqual(first);
    expect(second).not.toBe(first);
    if (!second.ok) throw new Error('expected ok');
    (second.tables as unknown[]).length = 0;
    const third = await checkPolicyOffThread(sql, opts, 5_000);
    expect(third).toEqual(first);
  });

  it('decides refusals every time, and keys verdicts by their options', async () => {
    const refused = "SELECT * FROM read_csv('/etc/passwd')";
    expect((await checkPolicyOffThread(refused, opts, 5_000)).ok).toBe(false);
    expect((await checkPolicyOffThread(refused, opts, 5_000)).ok).toBe(false);
    const script = 'INSERT INTO s.t VALUES (1); INSERT INTO s.t VALUES (2)';
    expect((await checkPolicyOffThread(script, opts, 5_000)).ok).toBe(true);
    expect((await checkPolicyOffThread(script, { ...opts, maxStatements: 1 }, 5_000)).ok).toBe(false);
  });
});
