// One browser suite's world, started at the top of its file and torn down after its last test: the api over a fresh
// database (with the catalog service and object store beside it, as `eider up` runs them, unless `api: 'alone'`),
// the first admin, the app served in front of the api, a real agent process when the suite names one (healthy before
// the suite's own preparation runs), and a browser on the app, signed in unless told otherwise.
// Built on stackWithAgent (the api, the admin, the agent and the teardown, in the same order and with the same
// guarantees): this adds the app, the suite's preparation and the browsers, each with a deadline of its own.
import { ADMIN, type TestApi, type TestStack } from '../../support/api.ts';
import { stackWithAgent, within, type StackWithAgent } from '../../support/stackWithAgent.ts';
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

type Ui = { url: string; close(): Promise<void> };

export interface StackWithBrowser<T extends TestApi = TestStack> extends Omit<StackWithAgent<T, Ui>, 'beside'> {
  ui: Ui;
  /** The browser started with the world (fails when started with `browser: 'none'`). */
  readonly b: Browser;
  /** Another browser on the app signed in as `who` (screenshots under `suite`), closed with the world. */
  open(suite: string, who: Who): Promise<Browser>;
}

const missing = (what: string, option: string) => (): never => {
  throw new Error(`stackWithBrowser: no ${what} in this suite (see the ${option} option)`);
};

/** Deadlines (ms) of the suite's preparation and of a browser's start and sign-in. */
const PREPARE_TIMEOUT = 240_000;
const BROWSER_TIMEOUT = 90_000;

export async function stackWithBrowser<A extends 'stack' | 'alone' = 'stack'>(
  opts: StackWithBrowserOptions<A>,
): Promise<StackWithBrowser<A extends 'alone' ? TestApi : TestStack>> {
  type T = A extends 'alone' ? TestApi : TestStack;
  const env = opts.agent
    ? { AGENT_BOOTSTRAP_TOKEN: `e2e-bootstrap-token-for-${opts.suite}`, AGENT_HEARTBEAT_INTERVAL_S: '0.5', ACTOR_REAPER_TICK_S: '0.2', ...opts.env }
    : { ...opts.env };
  // The app's build runs beside the agent's start.
  const base = (await stackWithAgent({
    api: opts.api,
    env,
    admin: opts.admin,
    agent: opts.agent ? { name: opts.agent } : undefined,
    closeAfter: opts.closeAfter,
    beside: (t) => serveUi(t),
  })) as StackWithAgent<T, Ui>;
  try {
    const ui = base.beside;
    const launched = (started: Promise<Browser>, what: string) =>
      within(BROWSER_TIMEOUT, what, started, (late) => late.close()).then((opened) => {
        base.defer(() => opened.close());
        return opened;
      });

    let b: Browser | undefined;
    const world: StackWithBrowser<T> = {
      t: base.t,
      get admin() {
        return base.admin;
      },
      get agent() {
        return base.agent;
      },
      get agentId() {
        return base.agentId;
      },
      restartAgent: base.restartAgent,
      get bootstrapToken() {
        return base.bootstrapToken;
      },
      sql: base.sql,
      defer: base.defer,
      close: base.close,
      ui,
      get b() {
        return b ?? missing('browser', 'browser')();
      },
      open: (suite, who) => launched(launchSignedIn(suite, ui.url, who), `a browser for ${suite}`),
    };
    if (opts.prepare) await within(PREPARE_TIMEOUT, `the preparation of ${opts.suite}`, opts.prepare(world));

    const browser = opts.browser ?? 'signed-in';
    if (browser !== 'none')
      b = await launched(browser === 'signed-in' ? launchSignedIn(opts.suite, ui.url, ADMIN) : launchBrowser(opts.suite), `the browser of ${opts.suite}`);
    return world;
  } catch (e) {
    // stackWithAgent tears down after the last test; a file whose top level throws has none, so: now.
    await base.close().catch((teardown: unknown) => console.error('[e2e] teardown after a failed start failed too:', teardown));
    throw e;
  }
}
