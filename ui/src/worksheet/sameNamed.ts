// Worksheets of one name in a list ("Worksheet 3" made in two browsers, two members' "Daily revenue"): each gets a
// detail that tells it from the others: the first line of its SQL, where that is the same too when it was made, and
// where even that reads the same (made within a second) the start of its id. A name no other in the list has gets none.
export interface Named {
  id: string;
  title: string;
  sql: string;
  created_at: string;
  owner_name?: string | null;
}

/** The first line of SQL that is not blank or a comment, shortened. */
export function firstLine(sql: string, max = 48): string {
  const line = sql
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l && !l.startsWith('--'));
  if (!line) return 'empty';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Each worksheet's disambiguating detail, by id (absent for a name that is unique in the list). */
export function sameNamedDetails(items: Named[], formatTime: (iso: string) => string): Map<string, string> {
  const byTitle = new Map<string, Named[]>();
  for (const w of items) byTitle.set(w.title, [...(byTitle.get(w.title) ?? []), w]);
  const out = new Map<string, string>();
  for (const group of byTitle.values()) {
    if (group.length < 2) continue;
    const owners = new Set(group.map((g) => g.owner_name ?? ''));
    const details = group.map((w) => {
      const parts: string[] = [];
      if (owners.size > 1 && w.owner_name) parts.push(`by ${w.owner_name}`);
      parts.push(firstLine(w.sql));
      return parts.join(' · ');
    });
    // Same first line too: when each was made; the same to the second: the start of the id.
    const made = group.map((w, i) => (details.filter((d) => d === details[i]).length > 1 ? `${details[i]} · made ${formatTime(w.created_at)}` : details[i]));
    for (const [i, w] of group.entries()) out.set(w.id, made.filter((d) => d === made[i]).length > 1 ? `${made[i]} · id ${w.id.slice(0, 8)}` : made[i]);
  }
  return out;
}
