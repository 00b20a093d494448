// How times, durations and sizes read in the app.

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m} min ${s} s`;
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i ? 1 : 0)} ${units[i]}`;
}

export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : n.toLocaleString();
}

/**
 * An hourly price, with its currency when known (only agent managers may read the compute options that name it).
 * The server's schema admits non-finite numbers as strings; those, like no price at all, read as "—".
 */
export function formatHourlyCost(cost: number | string | null | undefined, currency?: string | null): string {
  if (typeof cost !== 'number' || !Number.isFinite(cost)) return '—';
  if (currency) {
    try {
      return `${new Intl.NumberFormat(undefined, { style: 'currency', currency, maximumFractionDigits: 4 }).format(cost)}/h`;
    } catch {
      // not an ISO 4217 code: show it as written
      return `${cost} ${currency}/h`;
    }
  }
  return `${cost}/h`;
}
