// A point in time as the app shows it: the local date and time, with the exact instant (ISO 8601, UTC) as its
// tooltip and machine-readable value, so a time cut short by a narrow column can still be read whole.
import { formatTime } from './format.ts';

export function Time(props: { iso: string | null | undefined }) {
  if (!props.iso) return <>—</>;
  const d = new Date(props.iso);
  if (Number.isNaN(d.getTime())) return <>{props.iso}</>;
  return (
    <time dateTime={d.toISOString()} title={`${d.toISOString()} (${formatTime(props.iso)} local)`}>
      {formatTime(props.iso)}
    </time>
  );
}
