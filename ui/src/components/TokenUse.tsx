// A token's name and last use. The token lists (GET /api/me/pats and a service account's pats) answer `name` (what
// its owner named it for; null when unnamed) and `last_used_at` (to the minute; null: never used). An unnamed token
// shows its short id. A server that answers no last use gets "not recorded", never a made-up time.
import type { Token } from '../api/types.ts';
import { Time } from './Time.tsx';

type MaybeRecorded = Token & { name?: string | null; last_used_at?: string | null };

export function TokenName(props: { token: Token }) {
  const t = props.token as MaybeRecorded;
  return t.name ? (
    <span title={`token ${t.id}`}>
      {t.name} <span className="mono hint">{t.id.slice(0, 8)}</span>
    </span>
  ) : (
    <span className="mono" title={t.id}>
      {t.id.slice(0, 8)}
    </span>
  );
}

export function TokenLastUsed(props: { token: Token }) {
  const t = props.token as MaybeRecorded;
  if (!('last_used_at' in t)) return <span className="hint">not recorded</span>;
  return t.last_used_at ? <Time iso={t.last_used_at} /> : <span className="hint">never</span>;
}
