// docs/roles.md: who may call each route, rendered from the route table's access declarations (the same ones the
// server enforces and tests/authzMatrix.test.ts checks for every kind of caller).
import { allRoutes } from '../http/routes/index.ts';
import type { Access, RouteDef } from '../http/route.ts';

const ROLES = ['reader', 'writer', 'owner'] as const;

/** A runnable walk-through (tests/docsWalkthroughs.test.ts runs it against a fresh stack). */
const WALKTHROUGH = `## Walk-through: a reader

Walk-through (with \`URL\`, \`PAT\`, \`AGENT\` and \`json\` set as in the README's first steps; run by \`tests/docsWalkthroughs.test.ts\` against a fresh stack):

<!-- docs-test: walkthrough:members -->
\`\`\`sh
# an admin creates a user and makes them a reader of the workspace \`default\`
READER_ID=$(curl -s -X POST $URL/api/admin/users -H "authorization: Bearer $PAT" -H 'content-type: application/json' \\
  -d '{"email":"reader@example.com","name":"Rea Der","password":"another-long-password","role":"member"}' | json 'v.id')
curl -s -X PUT $URL/api/workspaces/default/members/$READER_ID -H "authorization: Bearer $PAT" \\
  -H 'content-type: application/json' -d '{"role":"reader"}' | json 'v.role'
# the reader signs in and takes a token of their own
curl -s -c reader.txt -X POST $URL/api/auth/login -H 'content-type: application/json' \\
  -d '{"email":"reader@example.com","password":"another-long-password"}' > /dev/null
READER=$(curl -s -b reader.txt -X POST $URL/api/me/pats -H "origin: $URL" -H 'content-type: application/json' \\
  -d '{"expires_in_days":1}' | json 'v.token')
# a reader may read, and may not write (403) or manage members (403)
curl -s -o /dev/null -w '%{http_code}\\n' $URL/api/workspaces/default/queries -H "authorization: Bearer $READER"
curl -s -X POST $URL/api/workspaces/default/saved-queries -H "authorization: Bearer $READER" \\
  -H 'content-type: application/json' -d '{"name":"mine","sql":"SELECT 1"}' | json '\`\${v.error}\`'
curl -s -o /dev/null -w '%{http_code}\\n' -X PUT $URL/api/workspaces/default/members/$READER_ID \\
  -H "authorization: Bearer $READER" -H 'content-type: application/json' -d '{"role":"owner"}'
\`\`\`

Prints:

<!-- docs-test: output -->
\`\`\`text
reader
200
forbidden
403
\`\`\``;
const YES = '✓';

/** One row's cells: reader, writer, owner, admin (signed-in workspace members; admins hold every permission). */
function cells(a: Access): { cols: [string, string, string, string]; note: string } {
  switch (a.kind) {
    case 'public':
      return { cols: [YES, YES, YES, YES], note: 'no sign-in needed' };
    case 'authenticated':
      return { cols: [YES, YES, YES, YES], note: 'anyone signed in' };
    case 'admin':
      return { cols: ['', '', '', YES], note: 'admins only' };
    case 'permission':
      return { cols: ['', '', '', YES], note: `the \`${a.permission}\` permission (admins hold it)` };
    case 'workspace': {
      const at = ROLES.indexOf(a.role);
      const c = ROLES.map((_, i) => (i >= at ? YES : '')) as [string, string, string];
      return { cols: [...c, YES], note: `workspace ${a.role} or above (an admin acts as owner)` };
    }
    case 'resource':
      return { cols: ['?', '?', '?', YES], note: a.note };
  }
}

export function renderRolesDocs(routes: readonly RouteDef[] = allRoutes): string {
  const byTag = new Map<string, RouteDef[]>();
  for (const r of routes) {
    const tag = r.tags[0] ?? 'other';
    byTag.set(tag, [...(byTag.get(tag) ?? []), r]);
  }
  const out = [
    '# Users, workspaces and roles',
    '',
    'Generated from the route table (`http/routes/`) by `UPDATE_GENERATED=1 npx vitest run tests/authzMatrix.test.ts`;',
    'do not edit by hand. The server enforces these declarations, and `tests/authzMatrix.test.ts` calls every route as',
    'every kind of caller to check them.',
    '',
    '## Who is who',
    '- **Users** have a global role: `admin` or `member`. Admins hold every permission (`agents:manage`,',
    '  `query-admin`, `catalogs`), manage users, service accounts, storage backends and agents, and act as owner in',
    '  every workspace. A deactivated user is refused everywhere (401) and their SQL sessions are closed.',
    '- **Service accounts** are users without a password that sign in only with their tokens; an admin creates them',
    '  and adds them to workspaces like anyone else.',
    '- **Workspace members** have one role per workspace: `reader` (read tables, run read-only queries, see the',
    '  workspace\'s history), `writer` (also write tables, schedules, models and saved queries, cancel members\'',
    '  queries), `owner` (also members, catalog attachments and grants, publishing models). A user who is not a member',
    '  sees the workspace as absent (404).',
    '- A **catalog manager** is whoever holds the `catalogs` permission, or the catalog\'s creator: they attach it to',
    '  workspaces and widen scoped attachments.',
    '- **Agents** have tiers per user (`use`, `operate`, `admin`): who may run on an agent, drain or restart it, and',
    '  manage it. A restricted agent is invisible (404) to a user without a tier on it.',
    '- A user\'s **SQL session** and its statements are that user\'s (and a `query-admin`\'s): another member gets 404.',
    '',
    WALKTHROUGH,
    '',
    '## Route by route',
    '',
    '"?" means the handler decides per resource, as the note says. An admin may call every route.',
  ];
  for (const [tag, rs] of [...byTag].sort(([a], [b]) => a.localeCompare(b))) {
    out.push('', `### ${tag}`, '', '| route | reader | writer | owner | admin | who |', '|---|---|---|---|---|---|');
    for (const r of [...rs].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method))) {
      const { cols, note } = cells(r.access);
      out.push(`| \`${r.method} ${r.path}\` | ${cols.join(' | ')} | ${note} |`);
    }
  }
  return `${out.join('\n')}\n`;
}
