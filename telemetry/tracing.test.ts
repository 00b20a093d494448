import { describe, expect, it } from 'vitest';
import { createTracing, processSpan, traceHeaders, tracesUrl } from './tracing.ts';
import { startOtlpReceiver } from '../tests/support/otlpReceiver.ts';

describe('tracing', () => {
  it('appends /v1/traces only to an endpoint without a path', () => {
    expect(tracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('https://otel.example.com/custom/traces')).toBe('https://otel.example.com/custom/traces');
  });

  it('is off without an endpoint: spans run their work, carry no context, export nothing', async () => {
    const off = createTracing({ serviceName: 'eider-api', endpoint: '' });
    expect(off.enabled).toBe(false);
    expect(await off.span('x', {}, () => off.traceparent() ?? 'none')).toBe('none');
    expect(await processSpan('y', {}, () => traceHeaders({ a: '1' }))).toEqual({ a: '1' });
    await off.shutdown();
  });

  it('on: a child span continues a given traceparent, and outgoing headers carry the active span', async () => {
    const receiver = await startOtlpReceiver();
    const on = createTracing({ serviceName: 'eider-api', endpoint: receiver.url });
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const tp = await on.span('child', { parent }, () => traceHeaders().traceparent);
    expect(tp).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    expect(tp).not.toContain('b7ad6b7169203331');
    // Outside any span nothing is added.
    expect(traceHeaders()).toEqual({});
    await on.flush();
    expect(receiver.spans()).toMatchObject([{ service: 'eider-api', name: 'child', parentSpanId: 'b7ad6b7169203331', traceId: '0af7651916cd43dd8448eb211c80319c' }]);
    await on.shutdown();
    await receiver.close();
  });
});
