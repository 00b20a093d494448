// Exporting a 1,000,000-row result (the rows bench's ten columns) as the web app does now and as it did before:
// before, the browser paged the whole result through /rows by cursor, 1,000 rows a page, and built the CSV itself
// (timed here without the CSV building, so the figure is a floor of the old export); now, GET /export has the agent
// write the file with DuckDB's COPY and the api stream it through. Also prints the first page of a sorted and of a
// filtered view (the agent re-reads the whole result). Run by hand: node bench/resultExport.ts [rows]
import { BENCH_BOOTSTRAP, adminToken, agentIdByName, runQuery, startAgentProcess, startApiProcess } from './support.ts';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const SQL = `SELECT i AS id, i * 7 AS big, 'name-' || i AS name, i / 3.0 AS ratio, (i % 7)::INTEGER AS bucket,
  TIMESTAMP '2024-01-01' + to_microseconds(i * 1000003) AS ts, DATE '2020-01-01' + (i % 1000)::INTEGER AS day,
  i % 2 = 0 AS flag, (i * 1.25)::DECIMAL(18,2) AS amount, md5(i::VARCHAR) AS hash
  FROM range(${ROWS}) t(i)`;

const api = await startApiProcess({ AGENT_BOOTSTRAP_TOKEN: BENCH_BOOTSTRAP });
const token = await adminToken(api);
const agent = await startAgentProcess(api, token, 'bench', BENCH_BOOTSTRAP);
const fmt = (n: number) => n.toLocaleString('en-US');
try {
  const agentId = await agentIdByName(api, token, 'bench');
  const q = await runQuery(api, token, agentId, SQL);
  const headers = { authorization: `Bearer ${token}` };
  const timed = async (what: string, url: string) => {
    const t0 = performance.now();
    const res = await fetch(url, { headers });
    if (res.status !== 200) throw new Error(`${what}: ${res.status} ${(await res.text()).slice(0, 200)}`);
    let bytes = 0;
    // Read as a client saving the download would: chunk by chunk, nothing kept.
    for await (const chunk of res.body!) bytes += (chunk as Uint8Array).byteLength;
    const s = (performance.now() - t0) / 1000;
    console.log(`${what}: ${s.toFixed(2)} s, ${(bytes / 2 ** 20).toFixed(1)} MiB`);
  };
  for (let pass = 1; pass <= 2; pass++) {
    console.log(`pass ${pass}, ${fmt(ROWS)} rows`);
    const t0 = performance.now();
    let rows = 0;
    for (let cursor: string | null = ''; cursor !== null; ) {
      const res = await fetch(`${api.url}/api/queries/${q.id}/rows?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { headers });
      const page = (await res.json()) as { rows: unknown[]; cursor: string | null };
      rows += page.rows.length;
      cursor = page.cursor;
    }
    console.log(`  before: paging ${fmt(rows)} rows through /rows (the old CSV export, without building the CSV): ${((performance.now() - t0) / 1000).toFixed(2)} s`);
    for (const format of ['csv', 'parquet', 'json']) await timed(`  export ${format}`, `${api.url}/api/queries/${q.id}/export?format=${format}`);
    const sort = encodeURIComponent(JSON.stringify([{ column: 'hash', dir: 'desc' }]));
    await timed(`  export csv sorted by hash`, `${api.url}/api/queries/${q.id}/export?format=csv&order_by=${sort}`);
    // A new view each pass (a different value), so the agent makes it rather than reusing the last pass's.
    const filter = encodeURIComponent(JSON.stringify([{ column: 'name', op: 'contains', value: `${pass}23` }]));
    await timed(`  first page sorted by hash (view made)`, `${api.url}/api/queries/${q.id}/rows?limit=500&order_by=${encodeURIComponent(JSON.stringify([{ column: 'hash', dir: pass === 1 ? 'desc' : 'asc' }]))}`);
    await timed(`  first page filtered (view made)`, `${api.url}/api/queries/${q.id}/rows?limit=500&filter=${filter}`);
    await timed(`  next page of the same filtered view`, `${api.url}/api/queries/${q.id}/rows?limit=500&offset=500&filter=${filter}`);
  }
} finally {
  agent.kill('SIGTERM');
  await api.stop();
}
