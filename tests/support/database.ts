// A fresh, migrated database per caller, cloned from the run's template.
import { inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import { connectDb, type Db } from '../../runtime/db.ts';
import { withDatabase } from './globalSetup.ts';

export interface TestDatabase {
  url: string;
  name: string;
  db: Db;
  drop(): Promise<void>;
}

export async function freshDatabase(opts: { empty?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = await connectDb({ url: adminUrl, poolSize: 1, maxOverflow: 0 });
  try {
    await admin.query(opts.empty ? `create database ${name}` : `create database ${name} template ${inject('pgTemplate')}`);
  } finally {
    await admin.close();
  }
  const url = withDatabase(adminUrl, name);
  const db = await connectDb({ url, poolSize: 4, maxOverflow: 4 });
  return {
    url,
    name,
    db,
    async drop() {
      await db.close();
      const a = await connectDb({ url: adminUrl, poolSize: 1, maxOverflow: 0 });
      try {
        await a.query(`drop database if exists ${name} with (force)`);
      } finally {
        await a.close();
      }
    },
  };
}
