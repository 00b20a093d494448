// Cost of authentication: GET /api/me with a bearer token against GET /api/version, same run, same process.
// Run by hand: node bench/auth.ts [requests] [concurrency]
import { adminToken, startApiProcess, load, fmt } from './support.ts';

const total = Number(process.argv[2] ?? 5000);
const concurrency = Number(process.argv[3] ?? 16);
const api = await startApiProcess();
try {
  const token = await adminToken(api);
  const auth = { authorization: `Bearer ${token}` };
  const hit = (path: string, headers: Record<string, string> = {}) => async () => {
    const r = await fetch(api.url + path, { headers });
    if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
    await r.arrayBuffer();
  };
  await load(500, concurrency, hit('/api/version')); // warm-up
  await load(500, concurrency, hit('/api/me', auth));
  const version = await load(total, concurrency, hit('/api/version'));
  const me = await load(total, concurrency, hit('/api/me', auth));
  console.log(`concurrency ${concurrency}, ${total} requests each`);
  console.log(`GET /api/version          ${fmt(version)}`);
  console.log(`GET /api/me (bearer)      ${fmt(me)}`);
  console.log(`authenticated / plain throughput ratio: ${(me.rps / version.rps).toFixed(2)}`);
} finally {
  await api.stop();
}
