// Fan-in: N simulated agents (default 1000) connected with heartbeats to one api process; prints the api's CPU
// share and resident memory while they stay connected. The simulated agents speak the real protocol over real
// WebSockets (auth with single-use bootstrap tokens, agent_status, heartbeats both ways); they run no SQL.
// Run by hand: node bench/fanin.ts [agents] [seconds] [heartbeat_interval_s]
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { PROTOCOL_VERSION } from '../protocol/index.ts';
import { adminToken, bootstrapToken, startApiProcess } from './support.ts';

const n = Number(process.argv[2] ?? 1000);
const seconds = Number(process.argv[3] ?? 30);
const interval = Number(process.argv[4] ?? 10);
const api = await startApiProcess({ AGENT_HEARTBEAT_INTERVAL_S: String(interval), AGENT_HEARTBEAT_TTL_S: String(interval * 3), DB_POOL_SIZE: '10' });
const pid = api.child.pid!;
const token = await adminToken(api);
const capabilities = { engine_version: 'v1.5.6', extensions: [], memory_limit_bytes: 1 << 30, max_concurrency_profile: 'auto' };

function cpuTicks(): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime, in clock ticks
}
const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

const sockets: WebSocket[] = [];
const timers: NodeJS.Timeout[] = [];
try {
  const rssBefore = rssMiB();
  const t0 = performance.now();
  for (let i = 0; i < n; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, async (_, j) => {
        const boot = await bootstrapToken(api, token);
        const ws = new WebSocket(api.url.replace(/^http/, 'ws') + '/agents/connect');
        sockets.push(ws);
        await new Promise<void>((res, rej) => {
          ws.once('error', rej);
          ws.on('message', (data) => {
            const f = JSON.parse(String(data));
            if (f.type === 'auth_ok') {
              ws.send(JSON.stringify({ type: 'agent_status', payload: { capabilities } }));
              timers.push(setInterval(() => ws.send(JSON.stringify({ type: 'heartbeat', payload: { sent_at: new Date().toISOString() } })), interval * 1000));
              res();
            }
          });
          ws.once('open', () =>
            ws.send(JSON.stringify({ type: 'auth', payload: { bootstrap_token: boot, protocol_version: PROTOCOL_VERSION, name: `sim-${i + j}`, results_port: 1, agent_version: 'sim' } })),
          );
        });
      }),
    );
  }
  const connectS = (performance.now() - t0) / 1000;
  const healthy = ((await (await fetch(`${api.url}/api/agents`, { headers: { authorization: `Bearer ${token}` } })).json()) as any[]).filter((a) => a.status === 'healthy').length;
  const c0 = cpuTicks();
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const cpuS = (cpuTicks() - c0) / 100;
  const wallS = (performance.now() - w0) / 1000;
  const stillHealthy = ((await (await fetch(`${api.url}/api/agents`, { headers: { authorization: `Bearer ${token}` } })).json()) as any[]).filter((a) => a.status === 'healthy').length;
  console.log(`${n} simulated agents connected in ${connectS.toFixed(1)} s (${healthy} healthy), heartbeat every ${interval} s`);
  console.log(`api process over ${wallS.toFixed(0)} s: CPU ${((cpuS / wallS) * 100).toFixed(1)}% of one core, RSS ${rssMiB().toFixed(0)} MiB (was ${rssBefore.toFixed(0)} MiB before the agents)`);
  console.log(`healthy at the end: ${stillHealthy}`);
} finally {
  for (const t of timers) clearInterval(t);
  for (const s of sockets) s.close();
  await api.stop();
}
