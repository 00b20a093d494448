// Tracing across processes (issue 20): with OTEL_EXPORTER_OTLP_ENDPOINT set, one query is one trace from the api's
// request span through the agent (a real process; context carried in the dispatch frame) to the catalog service
// and the object store, exported over OTLP http/protobuf to a receiver inside the test. No statement text and no
// credential reaches an attribute.
import { describe, expect, it } from 'vitest';
import { stackWithAgent } from './support/stackWithAgent.ts';
import { startOtlpReceiver, type ReceivedSpan } from './support/otlpReceiver.ts';
import { loadConfig } from '../runtime/config.ts';

const MARKER = 'literal-never-in-a-span';

const receiver = await startOtlpReceiver();
const { t, admin, agentId } = await stackWithAgent({
  env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  agent: { name: 'traced', env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } },
  closeAfter: [receiver],
});

async function run(sql: string): Promise<string> {
  const submit = await t.req('POST', '/api/workspaces/default/queries', { body: { sql, agent_id: agentId }, as: admin });
  expect(submit.status, submit.text).toBe(202);
  const final = await t.req('GET', `/api/queries/${submit.body.id}?wait_timeout_s=30`, { as: admin });
  expect(final.body.status, final.text).toBe('done');
  return submit.body.id;
}

/** The spans of the trace the query belongs to, once every part has exported what the test looks for. */
async function traceOf(queryId: string, expected: Array<[service: string, name: string]>): Promise<ReceivedSpan[]> {
  let spans: ReceivedSpan[] = [];
  await expect
    .poll(
      () => {
        const dispatch = receiver.spans().find((s) => s.name === 'dispatch' && s.attributes['eider.query_id'] === queryId);
        spans = dispatch ? receiver.spans().filter((s) => s.traceId === dispatch.traceId) : [];
        return expected.filter(([svc, name]) => !spans.some((s) => s.service === svc && s.name === name));
      },
      { timeout: 20_000, interval: 200 },
    )
    .toEqual([]);
  return spans;
}

const one = (spans: ReceivedSpan[], service: string, name: string) => {
  const found = spans.filter((s) => s.service === service && s.name === name);
  expect(found.length, `${service} ${name}`).toBeGreaterThan(0);
  return found[0];
};

describe('tracing', () => {
  it('one query is one trace: api request → policy → dispatch → agent query → catalog service → object store', async () => {
    await run('CREATE SCHEMA IF NOT EXISTS traced');
    const write = await run(`CREATE TABLE traced.t AS SELECT range AS id, '${MARKER}' AS s FROM range(100)`);
    const read = await run(`SELECT count(*) AS n FROM traced.t WHERE s = '${MARKER}'`);

    const spans = await traceOf(read, [
      ['eider-api', 'POST /api/workspaces/:workspace/queries'],
      ['eider-api', 'policy'],
      ['eider-api', 'dispatch'],
      ['eider-agent', 'query'],
      ['eider-agent', 'admission'],
      ['eider-agent', 'execution'],
      ['eider-agent', 'catalog GET'],
      ['eider-agent', 'object_store GET'],
      ['eider-catalog', 'GET /v1/:prefix/namespaces/:namespace/tables/:table'],
    ]);
    // The request span is the root; each hop is the child of the span that called it.
    const request = one(spans, 'eider-api', 'POST /api/workspaces/:workspace/queries');
    expect(request.parentSpanId).toBe('');
    const dispatch = one(spans, 'eider-api', 'dispatch');
    expect(dispatch.parentSpanId).toBe(request.spanId);
    expect(one(spans, 'eider-api', 'policy').parentSpanId).toBe(request.spanId);
    const query = one(spans, 'eider-agent', 'query');
    expect(query.parentSpanId).toBe(dispatch.spanId);
    const bySpan = new Map(spans.map((s) => [s.spanId, s]));
    const load = one(spans, 'eider-catalog', 'GET /v1/:prefix/namespaces/:namespace/tables/:table');
    expect(bySpan.get(load.parentSpanId)).toMatchObject({ service: 'eider-agent', name: 'catalog GET' });
    // The api's scoped-token request reached the catalog service in the same trace.
    expect(spans.some((s) => s.service === 'eider-catalog' && s.name === 'POST /v1/oauth/tokens' && bySpan.get(s.parentSpanId)?.service === 'eider-api')).toBe(true);

    // The write's trace holds the commit on both sides and the agent's upload.
    const wspans = await traceOf(write, [
      ['eider-agent', 'object_store PUT'],
      ['eider-agent', 'catalog POST'],
      ['eider-catalog', 'commit'],
      ['eider-catalog', 'object_store PUT'],
    ]);
    expect(new Set(wspans.map((s) => s.traceId)).size).toBe(1);

    // Nothing secret or user-written in any attribute of any span.
    const everything = JSON.stringify(receiver.spans().map((s) => s.attributes));
    expect(everything).not.toContain(MARKER);
    expect(everything).not.toMatch(/select|create table/i);
    expect(everything).not.toContain(admin.token!);
    expect(everything).not.toMatch(/bearer|eid_|secret/i);
  });

  it('an endpoint that is not an http(s) URL stops the api with one line naming it', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }).OTEL_EXPORTER_OTLP_ENDPOINT).toBe('');
  });
});
