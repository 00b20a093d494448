// One suite's world, started at the top of its file (`await stackWithAgent(...)`) and torn down after its last test:
// the api over a fresh database (with the catalog service and object store beside it, as `eider up` runs them,
// unless `api: 'alone'`), the first admin, and a real agent process, healthy before the suite's first line runs.
// Teardown runs in reverse order of start, every step even when an earlier one throws (the first error is thrown
// after the rest ran); a part that fails to start tears down what was already up before the error propagates.
// Each step has its own deadline: a top-level await has no hook timeout, so a part that never comes up would
// otherwise hold the file (and its worker) forever.
import { afterAll } from 'vitest';
import { runDone, setupAdmin, startTestApi, startTestStack, type Caller, type TestApi, type TestStack } from './api.ts';
import { cleanupAgentDir, startAgent, waitForHealthyAgent, type TestAgent } from './agent.ts';

export type ApiKind = 'stack' | 'alone';
export type ApiOf<A extends ApiKind> = A extends 'alone' ? TestApi : TestStack;
type Closeable = { close(): Promise<void> };

export interface StackWithAgentOptions<A extends ApiKind, B extends Closeable | undefined = undefined> {
  /** `stack` (the default): startTestStack; `alone`: startTestApi, no catalog service or object store. */
  api?: A;
  /** The api's environment. AGENT_BOOTSTRAP_TOKEN is set for the agent unless given here. */
  env?: Record<string, string>;
  /** Create the first admin (the default); false leaves the first-run setup to the suite (and allows no agent). */
  admin?: boolean;
  /** The agent process to start once the api is up and wait for until healthy (`env`: the agent's own). */
  agent?: { name: string; env?: Record<string, string> };
  /** Parts the suite started before the world (the api's env may name them): closed after it, or when it fails to start. */
  closeAfter?: Closeable[];
  /** Another part started beside the agent once the api is up (the slowest starts run side by side), closed before it. */
  beside?: (t: ApiOf<A>) => Promise<B>;
}

export interface StackWithAgent<T extends TestApi = TestStack, B = undefined> {
  t: T;
  /** The first admin (fails when started with `admin: false`). */
  readonly admin: Caller & { id: string };
  /** The agent process, the latest after `restartAgent` (fails when no `agent` was named). */
  readonly agent: TestAgent;
  /** Starts the agent again after a stop or a kill (same data dir: it reconnects with its session token). */
  restartAgent(): Promise<TestAgent>;
  /** The healthy agent's id (fails when no `agent` was named). */
  readonly agentId: string;
  /** The api's AGENT_BOOTSTRAP_TOKEN (single use: the agent has used it). */
  readonly bootstrapToken: string;
  /** What `beside` started. */
  beside: B;
  /** Runs `text` on the agent in the default workspace as the admin and expects it done (runDone). */
  sql(text: string): ReturnType<typeof runDone>;
  /** Adds a teardown step, run before those of the parts already started. */
  defer(close: () => Promise<void> | void): void;
  /** Tears the world down now (after the suite's last test otherwise); a second call does nothing. */
  close(): Promise<void>;
}

/** Deadlines of the steps (ms): generous for a loaded 2-core machine, short of forever. */
const START_TIMEOUT = { api: 120_000, admin: 30_000, beside: 180_000 };

/**
 * `started`, or an error after `ms` naming `what`. A part that comes up after its deadline is closed with `close`
 * then, so a slow start does not outlive the suite that gave up on it.
 */
export async function within<T>(ms: number, what: string, started: Promise<T>, close?: (late: T) => Promise<void> | void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(`${what}: not done after ${ms} ms`));
    }, ms);
  });
  started.then(
    async (late) => {
      if (timedOut && close) await Promise.resolve(close(late)).catch((e: unknown) => console.error(`[test] closing ${what} after its deadline failed:`, e));
    },
    () => undefined,
  );
  try {
    return await Promise.race([started, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A world's teardown: `defer` adds a step, `close` runs them in reverse order of adding, every one even when an earlier
 * one throws (the first error is thrown after the rest ran); a second `close` does nothing.
 */
export function teardownSteps(): { defer(close: () => Promise<void> | void): void; close(): Promise<void> } {
  const steps: Array<() => Promise<void> | void> = [];
  return {
    defer: (close) => void steps.push(close),
    async close() {
      const errors: unknown[] = [];
      for (const step of steps.splice(0).reverse()) {
        try {
          await step();
        } catch (e) {
          errors.push(e);
        }
      }
      if (errors.length) throw errors[0];
    },
  };
}

const missing = (what: string, option: string) => (): never => {
  throw new Error(`stackWithAgent: no ${what} in this suite (see the ${option} option)`);
};

export async function stackWithAgent<A extends ApiKind = 'stack', B extends Closeable | undefined = undefined>(
  opts: StackWithAgentOptions<A, B>,
): Promise<StackWithAgent<ApiOf<A>, B>> {
  type T = ApiOf<A>;
  const { defer, close } = teardownSteps();

  for (const part of opts.closeAfter ?? []) defer(() => part.close());
  try {
    const token = opts.env?.AGENT_BOOTSTRAP_TOKEN ?? (opts.agent && `test-bootstrap-token-for-${opts.agent.name}`);
    const env = token ? { ...opts.env, AGENT_BOOTSTRAP_TOKEN: token } : { ...opts.env };
    const closeApi = (api: TestApi) => api.close();
    const t = (await within(START_TIMEOUT.api, 'the api', opts.api === 'alone' ? startTestApi(env) : startTestStack(env), closeApi)) as T;
    defer(() => t.close());
    const admin = opts.admin === false ? undefined : await within(START_TIMEOUT.admin, 'the first admin', setupAdmin(t));

    // The agent's start and the part beside it take the longest: side by side. Each is torn down if it came up, even
    // when the other failed.
    const stopAgent = async (a: TestAgent) => {
      await a.stop();
      cleanupAgentDir(a);
    };
    const [besideStarted, agentStarted] = await Promise.allSettled([
      opts.beside ? within(START_TIMEOUT.beside, 'the part beside the agent', opts.beside(t), (late) => late?.close()) : Promise.resolve(undefined as B),
      // A spawn: it does not wait for the process (waitForHealthyAgent does, with its own deadline of 30 s).
      opts.agent ? startAgent(t, { bootstrapToken: env.AGENT_BOOTSTRAP_TOKEN!, name: opts.agent.name, env: opts.agent.env }) : Promise.resolve(undefined),
    ]);
    let agent = agentStarted.status === 'fulfilled' ? agentStarted.value : undefined;
    if (agent) defer(() => stopAgent(agent!));
    if (besideStarted.status === 'fulfilled' && besideStarted.value) defer(() => besideStarted.value!.close());
    if (besideStarted.status === 'rejected') throw besideStarted.reason;
    if (agentStarted.status === 'rejected') throw agentStarted.reason;

    const agentId = opts.agent ? await waitForHealthyAgent(t, admin ?? missing('admin', 'admin')(), opts.agent.name) : undefined;

    const world: StackWithAgent<T, B> = {
      t,
      get admin() {
        return admin ?? missing('admin', 'admin')();
      },
      get agent() {
        return agent ?? missing('agent', 'agent')();
      },
      async restartAgent() {
        agent = await world.agent.restart();
        return agent;
      },
      get agentId() {
        return agentId ?? missing('agent', 'agent')();
      },
      get bootstrapToken() {
        return token ?? missing('bootstrap token', 'agent')();
      },
      beside: besideStarted.value,
      sql: (text) => runDone(t, world.admin, world.agentId, text),
      defer,
      close,
    };
    afterAll(close);
    return world;
  } catch (e) {
    await close().catch((teardown: unknown) => console.error('[test] teardown after a failed start failed too:', teardown));
    throw e;
  }
}
