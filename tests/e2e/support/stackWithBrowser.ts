// One browser suite's world, started at the top of its file and torn down after its last test: the api over a fresh
// database (with the catalog service and object store beside it, as `eider up` runs them, unless `api: 'alone'`),
// the first admin, the app served in front of the api, a real agent process when the suite names one (healthy before
// the suite's own preparation runs), and a browser on the app, signed in unless told otherwise.
// Teardown runs in reverse order of start, every step even when an earlier one throws (the first error is thrown
// after the rest ran); a part that fails to start tears down what was already up before the error propagates.
import { afterAll } from 'vitest';
import { ADMIN, runDone, setupAdmin, startTestApi, startTestStack, type Caller, type TestApi, type TestStack } from '../../support/api.ts';
import { cleanupAgentDir, startAgent, waitForHealthyAgent, type TestAgent } from '../../support/agent.ts';
import { launchBrowser, launchSignedIn, type Browser } from './browser.ts';
import { serveUi } from './uiServer.ts';

type Who = { email: string; password: string };

export interface StackWithBrowserOptions<A extends 'stack' | 'alone'> {
  /** Names the screenshot folder of the browser. */
  suite: string;
  /** `stack` (the default): startTestStack; `alone`: startTestApi, no catalog service or object store. */
  api?: A;
  env?: Record<string, string>;
  /** Create the first admin (the default); false leaves the first-run setup to the suite. */
  admin?: boolean;
  /**
   * The name of an agent process to start beside the app and wait for until healthy. The api then gets a bootstrap
   * token for it, AGENT_HEARTBEAT_INTERVAL_S=0.5 and ACTOR_REAPER_TICK_S=0.2 unless `env` says otherwise.
   */
  agent?: string;
  /** Runs once the api, the app and the agent are up, before the browser starts (data the first screen shows). */
  prepare?: (w: StackWithBrowser<A extends 'alone' ? TestApi : TestStack>) => Promise<void>;
  /** Parts the suite started before the world (the api's env may name them): closed after it, or when it fails to start. */
  closeAfter?: Array<{ close(): Promise<void> }>;
  /** `signed-in` as ADMIN (the default), `signed-out` on no page yet, or `none` (the suite opens its own with `open`). */
  browser?: 'signed-in' | 'signed-out' | 'none';
}

export interface StackWithBrowser<T extends TestApi = TestStack> {
  t: T;
  /** The first admin (fails when started with `admin: false`). */
  readonly admin: Caller & { id: string };
  ui: { url: string; close(): Promise<void> };
  /** The browser started with the world (fails when started with `browser: 'none'`). */
  readonly b: Browser;
  /** The agent process (fails when no `agent` was named). */
  readonly agent: TestAgent;
  /** The healthy agent's id (fails when no `agent` was named). */
  readonly agentId: string;
  /** Runs `text` on the agent in the default workspace as the admin and expects it done (runDone). */
  sql(text: string): ReturnType<typeof runDone>;
  /** Another browser on the app signed in as `who` (screenshots under `suite`), closed with the world. */
  open(suite: string, who: Who): Promise<Browser>;
  /** Adds a teardown step, run before those of the parts already started. */
  defer(close: () => Promise<void> | void): void;
}

const missing = (what: string, option: string) => (): never => {
  throw new Error(`stackWithBrowser: no ${what} in this suite (see the ${option} option)`);
};

export async function stackWithBrowser<A extends 'stack' | 'alone' = 'stack'>(
  opts: StackWithBrowserOptions<A>,
): Promise<StackWithBrowser<A extends 'alone' ? TestApi : TestStack>> {
  type T = A extends 'alone' ? TestApi : TestStack;
  const steps: Array<() => Promise<void> | void> = [];
  const defer = (close: () => Promise<void> | void) => void steps.push(close);
  const close = async () => {
    const errors: unknown[] = [];
    for (const step of steps.splice(0).reverse()) {
      try {
        await step();
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length) throw errors[0];
  };

  for (const part of opts.closeAfter ?? []) defer(() => part.close());
  try {
    const env = opts.agent
      ? { AGENT_BOOTSTRAP_TOKEN: `e2e-bootstrap-token-for-${opts.suite}`, AGENT_HEARTBEAT_INTERVAL_S: '0.5', ACTOR_REAPER_TICK_S: '0.2', ...opts.env }
      : { ...opts.env };
    const t = (opts.api === 'alone' ? await startTestApi(env) : await startTestStack(env)) as T;
    defer(() => t.close());
    const admin = opts.admin === false ? undefined : await setupAdmin(t);

    // The app's build and the agent's start take the longest: side by side. Each is torn down if it came up, even
    // when the other failed.
    const [uiStarted, agentStarted] = await Promise.allSettled([
      serveUi(t),
      opts.agent ? startAgent(t, { bootstrapToken: env.AGENT_BOOTSTRAP_TOKEN!, name: opts.agent }) : Promise.resolve(undefined),
    ]);
    const agent = agentStarted.status === 'fulfilled' ? agentStarted.value : undefined;
    if (agent)
      defer(async () => {
        await agent.stop();
        cleanupAgentDir(agent);
      });
    if (uiStarted.status === 'fulfilled') defer(() => uiStarted.value.close());
    if (uiStarted.status === 'rejected') throw uiStarted.reason;
    if (agentStarted.status === 'rejected') throw agentStarted.reason;
    const ui = uiStarted.value;

    let agentId: string | undefined;
    if (opts.agent) agentId = await waitForHealthyAgent(t, admin ?? missing('admin', 'admin')(), opts.agent);

    let b: Browser | undefined;
    const world: StackWithBrowser<T> = {
      t,
      get admin() {
        return admin ?? missing('admin', 'admin')();
      },
      ui,
      get b() {
        return b ?? missing('browser', 'browser')();
      },
      get agent() {
        return agent ?? missing('agent', 'agent')();
      },
      get agentId() {
        return agentId ?? missing('agent', 'agent')();
      },
      sql: (text) => runDone(t, world.admin, world.agentId, text),
      async open(suite, who) {
        const opened = await launchSignedIn(suite, ui.url, who);
        defer(() => opened.close());
        return opened;
      },
      defer,
    };
    await opts.prepare?.(world);

    const browser = opts.browser ?? 'signed-in';
    if (browser !== 'none') {
      b = browser === 'signed-in' ? await launchSignedIn(opts.suite, ui.url, ADMIN) : await launchBrowser(opts.suite);
      const started = b;
      defer(() => started.close());
    }
    afterAll(close);
    return world;
  } catch (e) {
    await close().catch((teardown: unknown) => console.error('[e2e] teardown after a failed start failed too:', teardown));
    throw e;
  }
}
