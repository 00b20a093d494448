// @vitest-environment happy-dom
// What ResultPanel shows for two results that are not a plain grid: DuckDB's EXPLAIN output (its Plan view, the
// plan text monospaced) and a result whose rows the agent no longer keeps (said in words, not as a raw error).
import { describe, expect, it } from 'vitest';
import { act } from 'react';
import { testRoot } from '../testing/testRoot.ts';
import { ResultPanel } from './ResultPanel.tsx';
import type { QueryOut } from '../api/types.ts';
import { standInApi } from '../testing/standInApi.ts';


const root = testRoot();
let host: HTMLElement | null = null;

const query = (columns: string[], rows: number) =>
  ({ id: 'q-1', status: 'done', sql: 'x', row_count: rows, duration_ms: 3, columns, column_schema: columns.map((name) => ({ name, type: 'VARCHAR' })) }) as unknown as QueryOut;

async function render(q: QueryOut, respond: () => Response) {
  standInApi(respond);
  host = await root.mount(<ResultPanel query={q} />);
  for (let i = 0; i < 5; i++) await act(() => new Promise((r) => setTimeout(r, 10)));
}

describe('result panel', () => {
  it('opens EXPLAIN output on its Plan view, the plan text monospaced as DuckDB wrote it', async () => {
    const plan = '┌───────────┐\n│ HASH_JOIN │\n└───────────┘';
    await render(query(['explain_key', 'explain_value'], 1), () =>
      Response.json({ rows: [{ explain_key: 'physical_plan', explain_value: plan }], columns: ['explain_key', 'explain_value'], column_schema: null, cursor: null, total: 1 }),
    );
    expect(host!.querySelector('[role=tab][aria-selected=true]')?.textContent).toBe('Plan');
    const pre = host!.querySelector('pre.explain-plan');
    expect(pre?.getAttribute('aria-label')).toBe('Query plan');
    expect(pre?.textContent).toBe(plan);
  });

  it('says a result has expired when the api answers 410 for its rows', async () => {
    await render(query(['n'], 10), () => Response.json({ error: 'result_expired', message: 'the result file is gone (retention)' }, { status: 410 }));
    expect(host!.querySelector('[role=tab][aria-selected=true]')?.textContent).toBe('Results');
    expect(host!.textContent).toMatch(/This result has expired/);
  });
});
