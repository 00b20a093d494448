// A statement-policy worker thread: parses and judges off the api's event loop (see usecases/policyPool.ts).
import { parentPort } from 'node:worker_threads';
import { decidePolicy } from '../domain/statementPolicy/policy.ts';
import type { PolicyOptions } from '../domain/statementPolicy/policy.ts';

// Load the parser before taking work, so the time budget measures the parse and not the worker's start.
await decidePolicy('SELECT 1');
parentPort!.postMessage({ ready: true });

parentPort!.on('message', (m: { id: number; sql: string; opts: PolicyOptions }) => {
  void decidePolicy(m.sql, m.opts).then((result) => parentPort!.postMessage({ id: m.id, result }));
});
