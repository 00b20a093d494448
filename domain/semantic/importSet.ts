// What an import artifact becomes once read: the models it declares, each a list of raw definitions still to be
// admitted by the model rules, and the items the reader already could not use. Both readers (native YAML, dbt
// manifest) produce this, so the rules and the write path are the same for every provider.
import { Cause, Exit, Schema, SchemaIssue } from 'effect';
import { unprocessable } from '../errors.ts';

export interface DeclaredModel {
  slug: string;
  name: string;
  description: string;
  datasets: unknown[];
  relationships: unknown[];
  dimensions: unknown[];
  metrics: unknown[];
}

export interface Skipped {
  item: string;
  reason: string;
}

export interface ImportSet {
  models: DeclaredModel[];
  skipped: Skipped[];
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1();

/** Decodes `value` with `schema`, or gives the first issue as a sentence. */
export function decodeOrReason<S extends Schema.Codec<unknown, unknown>>(schema: S, value: unknown): { ok: true; value: S['Type'] } | { ok: false; reason: string } {
  const exit = Schema.decodeUnknownExit(schema)(value, { errors: 'all' });
  if (Exit.isSuccess(exit)) return { ok: true, value: exit.value as S['Type'] };
  const failure = exit.cause.reasons.find(Cause.isFailReason);
  const issues = failure ? formatter(failure.error.issue).issues : [];
  const reason = issues.map((i) => `${i.path?.length ? i.path.map(String).join('.') + ': ' : ''}${i.message}`).join('; ');
  return { ok: false, reason: reason || 'malformed' };
}

/** A bad artifact: 422 naming the format the provider expects. */
export const badArtifact = (provider: string, expected: string, why: string) =>
  unprocessable(`not a ${provider} import artifact (${why}); expected ${expected}`, 'invalid_artifact', { provider, expected });
