// Arbitrary bodies, query strings and path values on every route: always the error envelope on failure, never 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { setupAdmin, startTestApi, type Caller, type TestApi } from '../tests/support/api.ts';
import { allRoutes } from '../http/routes/index.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 400);
let t: TestApi;
let admin: Caller;

beforeAll(async () => {
  t = await startTestApi();
  admin = { token: (await setupAdmin(t)).token };
});
afterAll(async () => t?.close());

const pathValue = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.uuid(),
  fc.constantFrom('default', 'matrix', '..', '%00', '0', '-1', 'null'),
);
const query = fc.dictionary(
  fc.constantFrom('limit', 'cursor', 'status', 'q', 'sort', 'dir', 'since', 'x', 'wait_timeout_s'),
  fc.oneof(fc.string({ maxLength: 30 }), fc.integer().map(String)),
  { maxKeys: 4 },
);
const body = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 60 }),
  fc.constant(''),
);

describe('fuzzing every route', () => {
  it('never answers 5xx, and every error is the envelope', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...allRoutes),
        fc.array(pathValue, { minLength: 3, maxLength: 3 }),
        query,
        body,
        fc.boolean(),
        async (route, values, q, rawBody, asAdmin) => {
          let i = 0;
          const path = route.path.replace(/:([A-Za-z_]+)/g, () => encodeURIComponent(values[i++ % values.length]));
          const qs = new URLSearchParams(q).toString();
          const hasBody = ['POST', 'PUT', 'PATCH'].includes(route.method);
          const res = await t.req(route.method, path + (qs ? `?${qs}` : ''), {
            as: asAdmin ? admin : undefined,
            ...(hasBody ? { rawBody } : {}),
          });
          expect(res.status, `${route.method} ${path}?${qs} ${rawBody}`).toBeLessThan(500);
          if (res.status >= 400) {
            expect(typeof res.body?.error).toBe('string');
            expect(typeof res.body?.message).toBe('string');
            expect(res.body.detail).toEqual({ error: res.body.error, detail: res.body.message });
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});
