// Simulated agents for the scale axes of agents and running queries: real WebSocket clients speaking the agent
// protocol (protocol/, the same codec the agent uses) against the real api. Each one authenticates with a session
// token of an agent row the bench made in PostgreSQL, then heartbeats and re-sends its status at the interval the
// api's auth_ok names, as agent/controlChannel.ts does. One that `holds` answers a dispatch with query_started and
// keeps the query running until the api cancels it (cancel_ack, then query_failed `cancelled`, as agent/main.ts and
// agent/queryRunner.ts answer), so the api carries a running query without an engine behind it. Every one opens the
// SQL sessions asked of it and ends each statement at once with no result grid.
import { createHash } from 'node:crypto';
import WebSocket from 'ws';
import { PROTOCOL_VERSION, decodeServiceFrame, encodeAgentFrame, type AgentFrame } from '../../protocol/index.ts';
import type { Db } from '../../runtime/db.ts';
import { BENCH_BOOTSTRAP, agentIdByName, startAgentProcess } from '../support.ts';
import { eachConcurrently, type AxisContext } from './measure.ts';

interface SimAgent {
  id: string;
  name: string;
  /** queries dispatched to it and not yet cancelled */
  held: Map<string, number>;
  close(): void;
}

interface SimFleet {
  agents: SimAgent[];
  /** heartbeats and status frames sent, dispatches received, since the start */
  counts: { heartbeats: number; dispatches: number; cancels: number; sessions: number };
  /** Adds agents until there are `n`, `concurrency` dialling at once; resolves when each has its auth_ok. */
  grow(n: number, concurrency?: number): Promise<void>;
  close(): Promise<void>;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * A fleet of simulated agents named `${prefix}-{i}` dialling `wsUrl`; their rows (and session token hashes) are
 * inserted into `agents` as they are needed. `capabilities` is what each reports (a real agent's, copied).
 */
function simFleet(o: { db: Db; wsUrl: string; prefix: string; capabilities: unknown; hold: boolean }): SimFleet {
  const agents: SimAgent[] = [];
  const counts = { heartbeats: 0, dispatches: 0, cancels: 0, sessions: 0 };
  const token = (i: number) => `eid_agent_bench_${o.prefix}_${i}`;

  const dial = (i: number, id: string) =>
    new Promise<SimAgent>((resolve, reject) => {
      const socket = new WebSocket(o.wsUrl);
      const held = new Map<string, number>();
      let timer: NodeJS.Timeout | undefined;
      const send = (frame: AgentFrame) => {
        const enc = encodeAgentFrame(frame);
        if (!enc.ok) throw new Error(`bad frame ${frame.type}: ${enc.error.message}`);
        if (socket.readyState === WebSocket.OPEN) socket.send(enc.text);
      };
      const agent: SimAgent = {
        id,
        name: `${o.prefix}-${i}`,
        held,
        close: () => {
          clearInterval(timer);
          socket.close(1000, 'bench done');
        },
      };
      socket.on('open', () =>
        send({ type: 'auth', payload: { session_token: token(i), protocol_version: PROTOCOL_VERSION, name: agent.name, results_port: 9, agent_version: 'bench-sim' } }),
      );
      socket.on('error', reject);
      socket.on('message', (data) => {
        const decoded = decodeServiceFrame(data.toString());
        if (!decoded.ok) return;
        const f = decoded.frame;
        if (f.type === 'auth_ok') {
          send({ type: 'agent_status', payload: { capabilities: o.capabilities as never } });
          // Spread over the interval, as agents started at different times are.
          const every = f.payload.heartbeat_interval_s * 1000;
          setTimeout(() => {
            timer = setInterval(() => {
              counts.heartbeats++;
              send({ type: 'heartbeat', payload: { sent_at: new Date().toISOString(), in_flight: held.size } });
              send({ type: 'agent_status', payload: { capabilities: o.capabilities as never } });
            }, every);
          }, Math.random() * every);
          resolve(agent);
        } else if (f.type === 'auth_error') {
          reject(new Error(`auth_error: ${f.payload.code} ${f.payload.message}`));
        } else if (f.type === 'dispatch_query') {
          counts.dispatches++;
          const q = f.payload.query_id;
          if (!o.hold) {
            send({ type: 'query_failed', payload: { query_id: q, error: { code: 'internal_error', message: 'a simulated agent runs nothing' } } });
            return;
          }
          held.set(q, Date.now());
          send({ type: 'query_started', payload: { query_id: q } });
        } else if (f.type === 'open_session') {
          counts.sessions++;
          send({ type: 'session_opened', payload: { session_id: f.payload.session_id } });
        } else if (f.type === 'close_session') {
          send({ type: 'session_closed', payload: { session_id: f.payload.session_id } });
        } else if (f.type === 'execute_statement') {
          // A statement with no result grid (as a SET or a DDL ends): the api's path without an engine's.
          const q = f.payload.statement_id;
          send({ type: 'query_started', payload: { query_id: q, queued_ms: 0 } });
          send({ type: 'query_done', payload: { query_id: q, row_count: 0, duration_ms: 0, result_path: null, column_schema: null, columns: [], statement_type: 'other' } });
        } else if (f.type === 'cancel_query') {
          counts.cancels++;
          const q = f.payload.query_id;
          const since = held.get(q);
          held.delete(q);
          send({ type: 'cancel_ack', payload: { query_id: q, found: since !== undefined } });
          if (since !== undefined) {
            send({ type: 'query_failed', payload: { query_id: q, error: { code: 'cancelled', message: 'cancelled' }, duration_ms: Date.now() - since } });
          }
        }
      });
    });

  return {
    agents,
    counts,
    async grow(n, concurrency = 32) {
      const from = agents.length;
      if (n <= from) return;
      const rows = await o.db.query<{ id: string; i: number }>(
        `insert into agents (name, version, session_token_hash)
         select $1 || '-' || i, 'bench-sim', encode(sha256(convert_to($2 || i, 'UTF8')), 'hex') from generate_series($3::int, $4::int) i
         returning id, substring(name from length($1) + 2)::int as i`,
        [o.prefix, `eid_agent_bench_${o.prefix}_`, from, n - 1],
      );
      rows.sort((a, b) => a.i - b.i);
      if (sha256(token(from)) !== (await o.db.query<{ h: string }>(`select session_token_hash as h from agents where id = $1`, [rows[0].id]))[0].h) {
        throw new Error('the session token hash the bench stored is not the one the api computes');
      }
      await eachConcurrently(0, rows.length, concurrency, async (k) => {
        agents[rows[k].i] = await dial(rows[k].i, rows[k].id);
      });
    },
    async close() {
      for (const a of agents) a?.close();
      await new Promise((r) => setTimeout(r, 500));
    },
  };
}

/**
 * One real agent named `real` (running what is dispatched to it) and a fleet of simulated ones beside it reporting
 * its capabilities, dialling the api of `ctx`; the fleet is empty until grown. `close` closes the fleet, then stops
 * the real agent; the real agent is stopped too when the setup itself fails.
 */
export async function realAgentAndFleet(
  ctx: AxisContext,
  o: { prefix: string; hold: boolean },
): Promise<{ realId: string; fleet: SimFleet; close(): Promise<void> }> {
  const real = await startAgentProcess(ctx.api, ctx.token, 'real', BENCH_BOOTSTRAP);
  try {
    const realId = await agentIdByName(ctx.api, ctx.token, 'real');
    const [{ capabilities }] = await ctx.db.query<{ capabilities: unknown }>(`select capabilities from agents where id = $1`, [realId]);
    const fleet = simFleet({ db: ctx.db, wsUrl: `${ctx.api.url.replace(/^http/, 'ws')}/agents/connect`, prefix: o.prefix, capabilities, hold: o.hold });
    return {
      realId,
      fleet,
      close: async () => {
        await fleet.close();
        real.kill('SIGTERM');
      },
    };
  } catch (e) {
    real.kill('SIGTERM');
    throw e;
  }
}

/** CPU seconds (user + system) a process has used, from /proc (clock ticks of 10 ms). */
export async function cpuSeconds(pid: number): Promise<number> {
  const { readFileSync } = await import('node:fs');
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resident memory of a process, in bytes. */
export async function rssBytes(pid: number): Promise<number> {
  const { readFileSync } = await import('node:fs');
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
}
