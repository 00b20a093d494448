// One suite's catalog world without the api, started at the top of its file (`await catalogWithBridge(...)`) and torn
// down after its last test: a fresh database, the catalog service and bundled object store over it (tests/support/catalogStack.ts),
// its warehouses, and optionally in-process bridge agents (the agent's real query path, tests/support/bridgeAgent.ts)
// on the first warehouse. Shaped as stackWithAgent: teardown runs in reverse order of start, every step even when an
// earlier one throws (the first error is thrown after the rest ran); a part that fails to start tears down what was
// already up before the error propagates; each start has its own deadline (a top-level await has no hook timeout).
import { afterAll } from 'vitest';
import { freshDatabase, type TestDatabase } from './database.ts';
import { startCatalogStack, type CatalogStack, type ExtraStore } from './catalogStack.ts';
import { startBridgeAgent, type BridgeAgent } from './bridgeAgent.ts';
import { teardownSteps, within } from './stackWithAgent.ts';

type Closeable = { close(): Promise<void> };

export interface CatalogWithBridgeOptions {
  /** The warehouses to create, in order (default `['wh']`); the bridge agents use the first. */
  warehouses?: string[];
  /** The store the warehouses are rooted on (default: the bundled store). */
  store?: ExtraStore;
  /** The catalog service's lifetime of vended credentials. */
  credentialTtlSeconds?: number;
  /** How many bridge agents to start, side by side, once the warehouses exist (default none). */
  bridges?: number;
  /** Parts the suite started before the world: closed after it, or when it fails to start. */
  closeAfter?: Closeable[];
}

export interface CatalogWithBridge {
  tdb: TestDatabase;
  stack: CatalogStack;
  /** The bridge agents, in order (empty unless `bridges` was given). */
  agents: BridgeAgent[];
  /** The first bridge agent (fails when no `bridges` were asked for). */
  readonly agent: BridgeAgent;
  /** Adds a teardown step, run before those of the parts already started. */
  defer(close: () => Promise<void> | void): void;
  /** Tears the world down now; a second call does nothing. */
  close(): Promise<void>;
}

/** Deadlines of the steps (ms): generous for a loaded 2-core machine, short of forever. */
export const CATALOG_START_TIMEOUT = { database: 60_000, stack: 120_000, warehouse: 30_000, bridges: 120_000 };

/** The world, torn down after the file's last test (call it at the top of the file). */
export async function catalogWithBridge(opts: CatalogWithBridgeOptions = {}): Promise<CatalogWithBridge> {
  const world = await startCatalogWithBridge(opts);
  afterAll(world.close);
  return world;
}

/** The world, torn down only by its `close` (for a suite that starts one per `describe`, in its own hooks). */
export async function startCatalogWithBridge(opts: CatalogWithBridgeOptions = {}): Promise<CatalogWithBridge> {
  const { defer, close } = teardownSteps();

  for (const part of opts.closeAfter ?? []) defer(() => part.close());
  try {
    const tdb = await within(CATALOG_START_TIMEOUT.database, 'the database', freshDatabase(), (late) => late.drop());
    defer(() => tdb.drop());
    const stack = await within(CATALOG_START_TIMEOUT.stack, 'the catalog stack', startCatalogStack({ db: tdb.db, credentialTtlSeconds: opts.credentialTtlSeconds }), (late) => late.close());
    defer(() => stack.close());
    const warehouses = opts.warehouses ?? ['wh'];
    for (const name of warehouses) {
      await within(CATALOG_START_TIMEOUT.warehouse, `the warehouse ${name}`, stack.createWarehouse(name, { store: opts.store }));
    }

    // Each agent that came up is closed, even when another failed to start.
    const started = await Promise.allSettled(
      Array.from({ length: opts.bridges ?? 0 }, (_, i) =>
        within(CATALOG_START_TIMEOUT.bridges, `bridge agent ${i + 1}`, startBridgeAgent(stack, warehouses[0]), (late) => late.close()),
      ),
    );
    const agents: BridgeAgent[] = [];
    for (const s of started) {
      if (s.status !== 'fulfilled') continue;
      agents.push(s.value);
      defer(() => s.value.close());
    }
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;

    return {
      tdb,
      stack,
      agents,
      get agent() {
        if (!agents[0]) throw new Error('catalogWithBridge: no bridge agent in this suite (see the bridges option)');
        return agents[0];
      },
      defer,
      close,
    };
  } catch (e) {
    await close().catch((teardown: unknown) => console.error('[test] teardown after a failed start failed too:', teardown));
    throw e;
  }
}
