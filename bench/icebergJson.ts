// Parsing Iceberg JSON with exact 64-bit integers (iceberg/json.ts parseJson) against JSON.parse with a reviver that
// reads each number's source text (what parseJson did before) and plain JSON.parse (which corrupts the longs).
// Run by hand: `node bench/icebergJson.ts [snapshots]` (default 200 snapshots, about 90 KB of table metadata).
import { parseJson } from '../iceberg/json.ts';

const SNAPSHOTS = Number(process.argv[2] ?? 200);
const ROUNDS = 500;

// random positive 62-bit ids, as Iceberg writers make them: almost all outside 2^53
const randomId = () => (BigInt(Math.floor(Math.random() * 2 ** 31)) << 31n) | BigInt(Math.floor(Math.random() * 2 ** 31));
const now = Date.now();
const snapshots = Array.from({ length: SNAPSHOTS }, (_, i) => {
  const id = randomId();
  return `{"snapshot-id":${id},"parent-snapshot-id":${randomId()},"sequence-number":${i + 1},"timestamp-ms":${now},` +
    `"manifest-list":"s3://warehouse/lake/sales/orders/metadata/snap-${id}-1-0b1c2d3e-aaaa-bbbb-cccc-1234567890ab.avro",` +
    `"summary":{"operation":"append","added-data-files":"1","added-records":"1000","total-records":"${(i + 1) * 1000}"},"schema-id":0}`;
});
const text =
  `{"format-version":2,"table-uuid":"0b1c2d3e-aaaa-bbbb-cccc-1234567890ab","location":"s3://warehouse/lake/sales/orders",` +
  `"last-sequence-number":${SNAPSHOTS},"last-updated-ms":${now},"last-column-id":2,"current-schema-id":0,` +
  `"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"note","required":false,"type":"string"}]}],` +
  `"current-snapshot-id":${randomId()},"snapshots":[${snapshots.join(',')}],` +
  `"snapshot-log":[${snapshots.map(() => `{"timestamp-ms":${now},"snapshot-id":${randomId()}}`).join(',')}],"metadata-log":[]}`;

const INTEGER = /^-?\d+$/;
const exactReviver = (_key: string, value: unknown, context?: { source?: string }) =>
  typeof value === 'number' && !Number.isSafeInteger(value) && context?.source && INTEGER.test(context.source) ? BigInt(context.source) : value;

function time(label: string, parse: (t: string) => unknown): void {
  for (let i = 0; i < 100; i++) parse(text);
  const started = performance.now();
  for (let i = 0; i < ROUNDS; i++) parse(text);
  console.log(`  ${label.padEnd(44)} ${((performance.now() - started) / ROUNDS).toFixed(3)} ms`);
}

console.log(`table metadata with ${SNAPSHOTS} snapshots, ${(text.length / 1024).toFixed(0)} KB, mean of ${ROUNDS} parses:`);
time('JSON.parse, no reviver (longs corrupted)', (t) => JSON.parse(t));
time('JSON.parse with the source-text reviver', (t) => JSON.parse(t, exactReviver as (k: string, v: unknown) => unknown));
time('parseJson (iceberg/json.ts)', parseJson);
