// Catalog throughput, run by hand: `node bench/catalog.ts` (uses DATABASE_URL, else an embedded PostgreSQL).
// Prints loadTable per second, and commits per second on one table (writers contending, retrying on 409) and
// spread over 20 tables (one writer each).
import { appendCommit, startCatalogStack, type CatalogStack } from '../tests/support/catalogStack.ts';
import { benchDatabase, load, fmt, percentiles } from './support.ts';

const SCHEMA = { type: 'struct', fields: [{ id: 1, name: 'id', required: false, type: 'long' }] };

let nextId = 5_000_000_000_000_000_000n;

/** One append commit against the table's current state; retries on 409 and counts the conflicts. */
async function appendWithRetry(stack: CatalogStack, path: string, conflicts: { n: number }, commitMs?: number[]): Promise<void> {
  // Jittered exponential backoff between retries, as Iceberg clients do (commit.retry.min-wait-ms).
  for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
    const m = (await stack.request('GET', path)).body.metadata;
    const parent = m['current-snapshot-id'];
    const id = nextId++;
    const sent = performance.now();
    const res = await stack.request('POST', path, appendCommit(id, parent, BigInt(m['last-sequence-number']) + 1n, `${m.location}/metadata/snap-${id}.avro`));
    commitMs?.push(performance.now() - sent);
    if (res.status === 200) return;
    if (res.status !== 409) throw new Error(`commit failed: ${res.status} ${JSON.stringify(res.body)}`);
    conflicts.n++;
    await new Promise((r) => setTimeout(r, Math.random() * wait));
  }
}

async function main() {
  const { db, close: closeDb } = await benchDatabase(10);
  const suffix = Date.now().toString(36);
  const stack = await startCatalogStack({ db });
  try {
    const wh = `bench_${suffix}`;
    await stack.createWarehouse(wh);
    await stack.request('POST', `/v1/${wh}/namespaces`, { namespace: ['b'] });
    for (let i = 0; i <= 20; i++) {
      await stack.request('POST', `/v1/${wh}/namespaces/b/tables`, { name: `t${i}`, schema: SCHEMA });
    }
    const one = `/v1/${wh}/namespaces/b/tables/t0`;
    // Warm up connections and the JIT.
    await load(200, 8, async () => void (await stack.request('GET', one)));

    console.log(`loadTable (8 in flight)            ${fmt(await load(3000, 8, async () => void (await stack.request('GET', one))))}`);
    console.log(`loadTable, vended credentials      ${fmt(await load(2000, 8, async () => void (await stack.request('GET', one, undefined, { 'x-iceberg-access-delegation': 'vended-credentials' }))))}`);

    const c1 = { n: 0 };
    const commitMs: number[] = [];
    const single = await load(200, 1, () => appendWithRetry(stack, one, c1, commitMs));
    console.log(`commits, one table, 1 writer       ${fmt(single)}`);
    const own = percentiles(commitMs);
    console.log(`  the commit request alone           p50 ${own.p50.toFixed(2).padStart(6)} ms   p99 ${own.p99.toFixed(2).padStart(7)} ms`);
    const c8 = { n: 0 };
    const contended = await load(200, 8, () => appendWithRetry(stack, one, c8));
    console.log(`commits, one table, 8 writers      ${fmt(contended)}   ${c8.n} conflicts retried`);
    const c20 = { n: 0 };
    let rr = 0;
    const spread = await load(400, 20, () => appendWithRetry(stack, `/v1/${wh}/namespaces/b/tables/t${(rr++ % 20) + 1}`, c20));
    console.log(`commits, 20 tables, 20 writers     ${fmt(spread)}   ${c20.n} conflicts retried`);
    console.log('(each commit = load + commit: the figures count landed commits, latency includes retries)');
  } finally {
    await stack.close();
    await closeDb();
  }
}

await main();
