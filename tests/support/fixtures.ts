// Test fixtures (vitest's test.extend builder): a test names what it needs — an api over a fresh database, its first
// admin, a fresh signed-in member — and gets it started and, whatever the outcome, closed. The api and its admin live
// for a file (one server for a file's tests); members are new for every test.
// (Vitest reads a fixture's dependencies from its first parameter's destructuring pattern, hence the empty `{}`.)
import { onTestFinished, test } from 'vitest';
import { newUser, setupAdmin, startTestApi, startTestStack, type TestApi } from './api.ts';

export const apiTest = test
  .extend('api', { scope: 'file' }, async ({}, { onCleanup }) => {
    const t = await startTestApi();
    onCleanup(() => t.close());
    return t;
  })
  .extend('admin', { scope: 'file' }, async ({ api }) => setupAdmin(api))
  .extend('user', async ({ api, admin }) => newUser(api, admin));

/** The same with the catalog service and the bundled object store beside the api. */
export const stackTest = test
  .extend('stack', { scope: 'file' }, async ({}, { onCleanup }) => {
    const t = await startTestStack();
    onCleanup(() => t.close());
    return t;
  })
  .extend('admin', { scope: 'file' }, async ({ stack }) => setupAdmin(stack))
  .extend('user', async ({ stack, admin }) => newUser(stack, admin));

/** One more api (over its own fresh database) for the running test only: closed when the test ends, whatever the
 *  outcome, so a failed assertion never leaves a server behind. */
export async function apiForTest(env: Record<string, string> = {}): Promise<TestApi> {
  const api = await startTestApi(env);
  onTestFinished(() => api.close());
  return api;
}
