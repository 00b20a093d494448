// One real PostgreSQL for the whole run (embedded, or the server in DATABASE_URL), with template databases
// migrated once; each test file clones what it needs (CREATE DATABASE … TEMPLATE …), so files never share rows.
import type { TestProject } from 'vitest/node';
import { rmSync, mkdirSync } from 'node:fs';
import { startEmbeddedPostgres, type EmbeddedPg } from '../../runtime/postgres.ts';
import { connectDb } from '../../runtime/db.ts';
import { migrate } from '../../runtime/migrate.ts';

let pg: EmbeddedPg | undefined;

export async function setup(project: TestProject) {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const dir = `${process.cwd()}/.test-data/pg-${process.pid}`;
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    pg = await startEmbeddedPostgres(dir);
    adminUrl = pg.url;
  }
  const admin = await connectDb({ url: adminUrl, poolSize: 1, maxOverflow: 1 });
  const tag = `${process.pid}`;
  const template = `eider_tpl_${tag}`;
  await admin.query(`drop database if exists ${template}`);
  await admin.query(`create database ${template}`);
  const tplUrl = withDatabase(adminUrl, template);
  const tpl = await connectDb({ url: tplUrl, poolSize: 1, maxOverflow: 1 });
  await migrate(tpl, 'control');
  await migrate(tpl, 'catalog');
  await tpl.close();
  await admin.close();
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
}

export async function teardown() {
  if (pg) {
    await pg.stop();
    rmSync(`${process.cwd()}/.test-data/pg-${process.pid}`, { recursive: true, force: true });
  }
}

export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}
