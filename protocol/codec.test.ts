import { describe, expect, it } from 'vitest';
import {
  decodeAgentFrame,
  decodeServiceFrame,
  encodeAgentFrame,
  encodeServiceFrame,
  PROTOCOL_VERSION,
  type AgentFrame,
  type ServiceFrame,
} from './index.ts';

const qid = '0b9c5a1e-7a4f-4a52-9a3c-2f1d7f0e6b11';
const aid = '5d1f3b64-3f0e-4b8a-8b0e-6f2a1c9d7e42';

const agentFrames: AgentFrame[] = [
  { type: 'auth', payload: { bootstrap_token: 'b', protocol_version: PROTOCOL_VERSION, results_port: 8001, agent_version: '0.1.0' } },
  { type: 'auth', payload: { session_token: 's', protocol_version: PROTOCOL_VERSION, name: 'a1', results_port: 0, agent_version: '0.1.0' } },
  {
    type: 'agent_status',
    payload: {
      capabilities: { engine_version: 'v1.5.6', extensions: ['parquet'], memory_limit_bytes: 1024, max_concurrency_profile: 'auto' },
      load: { running: 1, queued: 0, reserved_bytes: 10, budget_bytes: 1024 },
    },
  },
  { type: 'heartbeat', payload: { sent_at: new Date().toISOString(), in_flight: 2 } },
  { type: 'query_started', payload: { query_id: qid, queued_ms: 3 } },
  {
    type: 'query_done',
    payload: {
      query_id: qid, row_count: 3, duration_ms: 1.5, result_path: `results/${qid}.parquet`,
      column_schema: [{ name: 'a', type: 'DECIMAL(10,2)' }], columns: ['a'], statement_type: 'select',
      profile: {
        summary: { total_ms: 1, rows: 3, peak_memory_bytes: null },
        operators: { name: 'PROJECTION', timing_ms: 0.1, cardinality: 3, children: [{ name: 'SCAN', timing_ms: 0, cardinality: 3, children: [] }] },
      },
    },
  },
  { type: 'query_done', payload: { query_id: qid, row_count: 0, duration_ms: 1, result_path: null, column_schema: null, columns: [] } },
  { type: 'query_failed', payload: { query_id: qid, error: { code: 'queue_full', message: 'queue full' } } },
  { type: 'query_progress', payload: { query_id: qid, percent: 42.5, rows_processed: 1_000_000, rows_total: 2_353_000 } },
  { type: 'query_progress', payload: { query_id: qid, percent: 0, rows_processed: 0, rows_total: null } },
  { type: 'cancel_ack', payload: { query_id: qid, found: true } },
  { type: 'error', payload: { code: 'bad_frame', message: 'x', frame_type: 'dispatch_query' } },
];

const serviceFrames: ServiceFrame[] = [
  { type: 'auth_ok', payload: { agent_id: aid, session_token: 'tok', heartbeat_interval_s: 10, heartbeat_ttl_s: 30 } },
  { type: 'auth_ok', payload: { agent_id: aid, heartbeat_interval_s: 10, heartbeat_ttl_s: 30, features: ['query_progress'] } },
  { type: 'auth_error', payload: { code: 'protocol_version_mismatch', message: 'agent speaks 2, service 1' } },
  { type: 'heartbeat', payload: { sent_at: '2026-01-01T00:00:00Z' } },
  {
    type: 'dispatch_query',
    payload: { query_id: qid, sql: 'select 1', workspace: 'default', backend: 'object_store', timeout_s: 60, catalogs: [{ name: 'warehouse', uri: 'http://x' }] },
  },
  { type: 'cancel_query', payload: { query_id: qid } },
];

describe('frame codec', () => {
  it('round-trips every agent frame through encode and decode', () => {
    for (const f of agentFrames) {
      const enc = encodeAgentFrame(f);
      expect(enc.ok, JSON.stringify(f)).toBe(true);
      if (!enc.ok) continue;
      const dec = decodeAgentFrame(enc.text);
      expect(dec).toEqual({ ok: true, frame: f });
    }
  });

  it('round-trips every service frame through encode and decode', () => {
    for (const f of serviceFrames) {
      const enc = encodeServiceFrame(f);
      expect(enc.ok, JSON.stringify(f)).toBe(true);
      if (!enc.ok) continue;
      expect(decodeServiceFrame(enc.text)).toEqual({ ok: true, frame: f });
    }
  });

  it('auth_ok names the optional frames the control plane accepts, any number of them', () => {
    const dec = decodeServiceFrame(JSON.stringify({ type: 'auth_ok', payload: { agent_id: aid, heartbeat_interval_s: 1, heartbeat_ttl_s: 3, features: ['query_progress', 'later'] } }));
    expect(dec.ok && dec.frame.type === 'auth_ok' && dec.frame.payload.features).toEqual(['query_progress', 'later']);
  });

  it('keeps the open catalog attachment fields', () => {
    const dec = decodeServiceFrame(JSON.stringify(serviceFrames[4]));
    expect(dec.ok && dec.frame.type === 'dispatch_query' && dec.frame.payload.catalogs?.[0]).toEqual({ name: 'warehouse', uri: 'http://x' });
  });

  it('answers bad input with a typed error and never throws', () => {
    const cases: Array<[unknown, string]> = [
      ['{not json', 'bad_json'],
      ['[1,2]', 'bad_frame'],
      ['null', 'bad_frame'],
      ['{"payload":{}}', 'bad_frame'],
      ['{"type":"nope","payload":{}}', 'unknown_frame_type'],
      ['{"type":"auth_ok","payload":{}}', 'unexpected_frame_type'],
      ['{"type":"__proto__","payload":{}}', 'unknown_frame_type'],
      ['{"type":"auth","payload":{"protocol_version":1,"results_port":1,"agent_version":"x"}}', 'bad_frame'],
      ['{"type":"query_done","payload":{"query_id":"not-a-uuid","row_count":1,"duration_ms":1,"result_path":null,"column_schema":null,"columns":[]}}', 'bad_frame'],
      ['{"type":"query_done","payload":{"query_id":"' + qid + '","row_count":-1,"duration_ms":1,"result_path":null,"column_schema":null,"columns":[]}}', 'bad_frame'],
      ['{"type":"query_failed","payload":{"query_id":"' + qid + '","error":{"code":"made_up","message":"x"}}}', 'bad_frame'],
      ['{"type":"query_progress","payload":{"query_id":"' + qid + '","percent":101,"rows_processed":1,"rows_total":null}}', 'bad_frame'],
      ['{"type":"query_progress","payload":{"query_id":"' + qid + '","percent":-1,"rows_processed":0,"rows_total":0}}', 'bad_frame'],
      [42, 'bad_frame'],
    ];
    for (const [input, code] of cases) {
      const dec = decodeAgentFrame(input);
      expect(dec.ok, String(input)).toBe(false);
      if (!dec.ok) {
        expect(dec.error.code, String(input)).toBe(code);
        expect(dec.error.message).not.toContain('\n');
      }
    }
    const svc = decodeServiceFrame('{"type":"dispatch_query","payload":{"query_id":"' + qid + '","sql":"","workspace":"w","backend":"b","timeout_s":1}}');
    expect(svc.ok).toBe(false);
    if (!svc.ok) {
      expect(svc.error.frameType).toBe('dispatch_query');
      expect(svc.error.message).toContain('sql');
    }
  });

  it('refuses to encode an invalid frame instead of sending it', () => {
    const bad = { type: 'heartbeat', payload: { sent_at: '', in_flight: 1.5 } } as unknown as AgentFrame;
    const enc = encodeAgentFrame(bad);
    expect(enc.ok).toBe(false);
    const wrongSide = encodeServiceFrame({ type: 'query_started', payload: { query_id: qid } } as unknown as ServiceFrame);
    expect(wrongSide.ok).toBe(false);
  });
});
