// The documentation tools' index: the Markdown pages of ASSISTANT_DOCS_DIR in PostgreSQL with a full-text vector,
// rebuilt at every api start (every replica may do it; the upsert is idempotent), searched with websearch syntax.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { Schema } from 'effect';
import type { Db, Queryable } from '../runtime/db.ts';
import { exec, rows, sql } from '../runtime/sql.ts';
import { notFound } from './errors.ts';

// Row shapes at the database boundary.
const DocHitRow = Schema.Struct({ path: Schema.String, title: Schema.String, snippet: Schema.String });
export type DocHit = typeof DocHitRow.Type;
const PageRow = Schema.Struct({ path: Schema.String, title: Schema.String, body: Schema.String });

async function markdownFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await markdownFiles(p)));
    else if (e.isFile() && e.name.endsWith('.md')) out.push(p);
  }
  return out;
}

/** Indexes every page under `dir`; false when the directory is absent (the tools are then withheld). */
export async function indexDocs(db: Db, dir: string): Promise<boolean> {
  let files: string[];
  try {
    files = await markdownFiles(dir);
  } catch {
    return false;
  }
  const pages = await Promise.all(
    files.map(async (f) => {
      const body = await readFile(f, 'utf8');
      const title = /^#\s+(.+)$/m.exec(body)?.[1]?.trim() ?? relative(dir, f);
      return { path: relative(dir, f).split('\\').join('/'), title, body };
    }),
  );
  await db.tx(async (q) => {
    for (const p of pages) {
      await exec(
        q,
        sql`insert into doc_pages (path, title, body) values (${p.path}, ${p.title}, ${p.body})
            on conflict (path) do update set title = excluded.title, body = excluded.body, indexed_at = now()`,
      );
    }
    await exec(q, sql`delete from doc_pages where path <> all(${pages.map((p) => p.path)}::text[])`);
  });
  return true;
}

export async function searchDocs(q: Queryable, text: string, limit: number): Promise<DocHit[]> {
  return rows(
    q,
    DocHitRow,
    sql`select d.path, d.title,
               ts_headline('english', d.body, w, 'MaxWords=40, MinWords=15, MaxFragments=2, StartSel=**, StopSel=**') as snippet
          from doc_pages d, websearch_to_tsquery('english', ${text}) w
         where d.tsv @@ w
         order by ts_rank(d.tsv, w) desc, d.path
         limit ${limit}`,
  );
}

/** A page from `offset`, at most `maxChars` characters; next_offset is null at its end. */
export async function readDocPage(q: Queryable, path: string, offset: number, maxChars: number) {
  const [page] = await rows(q, PageRow, sql`select path, title, body from doc_pages where path = ${path}`);
  if (!page) throw notFound(`documentation page ${path}`);
  const text = page.body.slice(offset, offset + maxChars);
  const end = offset + text.length;
  return { path: page.path, title: page.title, text, total_chars: page.body.length, next_offset: end < page.body.length ? end : null };
}

/** Whether any page is indexed (the documentation tools are offered only then). */
export async function hasDocPages(q: Queryable): Promise<boolean> {
  return (await exec(q, sql`select 1 from doc_pages limit 1`)).length > 0;
}
