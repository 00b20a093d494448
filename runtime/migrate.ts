// Applies numbered SQL files from migrations/<set>/ once each, under an advisory lock so that replicas
// started at the same moment migrate one at a time and the second finds nothing left to do.
import { readdirSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';
import { splitStatements } from '../sqltext/scan.ts';

const MIGRATIONS_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'migrations');

/** The migration sets, each applied into its own PostgreSQL schema. */
const MIGRATION_SETS = { control: 'eider', catalog: 'catalog' } as const;
export type MigrationSet = keyof typeof MIGRATION_SETS;

export interface MigrationResult {
  applied: string[];
}

export async function migrate(db: Db, set: MigrationSet): Promise<MigrationResult> {
  const schema = MIGRATION_SETS[set];
  const dir = join(MIGRATIONS_ROOT, set);
  const files = readdirSync(dir).filter((f) => /^\d+_.+\.sql$/.test(f)).sort();
  const applied: string[] = [];
  await db.withConnection(async (conn) => {
    await conn.query('select pg_advisory_lock(hashtext($1))', [`eider:migrate:${schema}`]);
    try {
      await conn.query(`create schema if not exists ${schema}`);
      await conn.query(
        `create table if not exists ${schema}.schema_migrations (version text primary key, applied_at timestamptz not null default now())`,
      );
      const done = new Set(
        (await conn.query<{ version: string }>(`select version from ${schema}.schema_migrations`)).map((r) => r.version),
      );
      for (const file of files) {
        if (done.has(file)) continue;
        const text = readFileSync(join(dir, file), 'utf8');
        await conn.query('begin');
        try {
          await conn.query(`set local search_path to ${schema}, public`);
          // PostgreSQL reads quotes, dollar quotes and comments as sqltext/ does (DuckDB's scanner is PostgreSQL's).
          for (const stmt of splitStatements(text)) await conn.query(stmt);
          await conn.query(`insert into ${schema}.schema_migrations (version) values ($1)`, [file]);
          await conn.query('commit');
        } catch (e) {
          await conn.query('rollback');
          throw new Error(`migration ${set}/${file} failed: ${(e as Error).message}`);
        }
        applied.push(file);
      }
    } finally {
      await conn.query('select pg_advisory_unlock(hashtext($1))', [`eider:migrate:${schema}`]);
    }
  });
  return { applied };
}
