// A client paging a 1,000,000-row result through the api's /rows, pages of 1000 by cursor, as a BI tool does:
// prints rows per second end to end (auth, the query row, the agent's result file read by range requests, decode,
// JSON). Run by hand: node bench/rowsApi.ts [rows]
import { BENCH_BOOTSTRAP, adminToken, agentIdByName, runQuery, startAgentProcess, startApiProcess } from './support.ts';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const SQL = `SELECT i AS id, i * 7 AS big, 'name-' || i AS name, i / 3.0 AS ratio, (i % 7)::INTEGER AS bucket,
  TIMESTAMP '2024-01-01' + to_microseconds(i * 1000003) AS ts, DATE '2020-01-01' + (i % 1000)::INTEGER AS day,
  i % 2 = 0 AS flag, (i * 1.25)::DECIMAL(18,2) AS amount, md5(i::VARCHAR) AS hash
  FROM range(${ROWS}) t(i)`;

const api = await startApiProcess({ AGENT_BOOTSTRAP_TOKEN: BENCH_BOOTSTRAP, ...(process.env.API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.API_NODE_OPTIONS } : {}) });
const token = await adminToken(api);
const agent = await startAgentProcess(api, token, 'bench', BENCH_BOOTSTRAP);
try {
  const agentId = await agentIdByName(api, token, 'bench');
  const q = await runQuery(api, token, agentId, SQL);
  const headers = { authorization: `Bearer ${token}` };
  for (let pass = 1; pass <= 2; pass++) {
    const t0 = performance.now();
    let rows = 0;
    let bytes = 0;
    for (let cursor: string | null = ''; cursor !== null; ) {
      const res = await fetch(`${api.url}/api/queries/${q.id}/rows?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { headers });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`rows: ${res.status} ${text.slice(0, 200)}`);
      bytes += text.length;
      const page = JSON.parse(text) as { rows: unknown[]; cursor: string | null };
      rows += page.rows.length;
      cursor = page.cursor;
    }
    const s = (performance.now() - t0) / 1000;
    console.log(`pass ${pass}: ${rows.toLocaleString('en-US')} rows in ${s.toFixed(2)} s: ${Math.round(rows / s).toLocaleString('en-US')} rows/s (${(bytes / 2 ** 20).toFixed(0)} MiB of JSON)`);
  }
} finally {
  agent.kill('SIGTERM');
  await api.stop();
}
