// The worksheets kept on the server, in a panel over the tabs: "My worksheets" (private or shared, deletable) and
// "Shared in workspace" (every member's shared ones). Opening one shows it in a tab (the tab it is already in, if any).
// Worksheets of one name each say what tells them apart (sameNamed.ts), in their text and their accessible name.
import type { WorksheetOut } from '../api/types.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorNotice, Loading } from '../components/ErrorNotice.tsx';
import { ModalDialog } from '../components/ModalDialog.tsx';
import { Time } from '../components/Time.tsx';
import { formatTime } from '../components/format.ts';
import { sameNamedDetails } from './sameNamed.ts';
import { deleteWorksheet, listWorksheets } from './worksheetSync.ts';
import { EmptyState } from '../components/EmptyState.tsx';

export function WorksheetBrowser(props: { ws: string; onOpen: (w: WorksheetOut) => void; onDeleted: (id: string) => void; onClose: () => void }) {
  const mine = useAsync((signal) => listWorksheets(props.ws, 'mine', signal), [props.ws]);
  const shared = useAsync((signal) => listWorksheets(props.ws, 'shared', signal), [props.ws]);
  const remove = async (w: WorksheetOut) => {
    if (!confirm(`Delete the worksheet “${w.title}”? ${w.visibility === 'workspace' ? 'The members it is shared with lose it too.' : ''}`)) return;
    try {
      await deleteWorksheet(props.ws, w.id);
      props.onDeleted(w.id);
    } finally {
      mine.reload();
      shared.reload();
    }
  };
  const others = shared.data?.items.filter((w) => !w.editable) ?? [];
  const mineDetails = sameNamedDetails(mine.data?.items ?? [], formatTime);
  const sharedDetails = sameNamedDetails(others, formatTime);
  return (
    <ModalDialog label="Worksheets" className="worksheet-browser" onClose={props.onClose}>
      <h2>My worksheets</h2>
      {mine.error ? <ErrorNotice error={mine.error} what="Your worksheets" /> : null}
      {!mine.data && !mine.error ? <Loading label="Loading worksheets…" /> : null}
      {mine.data ? (
        mine.data.items.length ? (
          <ul aria-label="My worksheets" className="worksheet-list">
            {mine.data.items.map((w) => (
              <li key={w.id} className="row">
                <button type="button" className="link" onClick={() => props.onOpen(w)} title={w.sql.slice(0, 300)}>
                  {w.title}
                  {mineDetails.has(w.id) ? <span className="same-named"> — {mineDetails.get(w.id)}</span> : null}
                </button>
                {w.visibility === 'workspace' ? <span className="badge">shared</span> : null}
                <span className="hint grow">
                  changed <Time iso={w.updated_at} />
                </span>
                <button type="button" className="danger small" aria-label={`Delete ${w.title}${mineDetails.has(w.id) ? ` — ${mineDetails.get(w.id)}` : ''}`} onClick={() => void remove(w)}>
                  Delete
                </button>
              </li>
            ))}
          </ul>
        ) : (
          <EmptyState>None yet: a worksheet is kept here once you write in it.</EmptyState>
        )
      ) : null}
      <h2>Shared in workspace</h2>
      {shared.error ? <ErrorNotice error={shared.error} what="Shared worksheets" /> : null}
      {!shared.data && !shared.error ? <Loading label="Loading shared worksheets…" /> : null}
      {shared.data ? (
        others.length ? (
          <ul aria-label="Shared in workspace" className="worksheet-list">
            {others.map((w) => (
              <li key={w.id} className="row">
                <button type="button" className="link" onClick={() => props.onOpen(w)} title={w.sql.slice(0, 300)}>
                  {w.title}
                  {sharedDetails.has(w.id) ? <span className="same-named"> — {sharedDetails.get(w.id)}</span> : null}
                </button>
                <span className="hint grow">
                  by {w.owner_name ?? 'a former member'} · changed <Time iso={w.updated_at} />
                </span>
              </li>
            ))}
          </ul>
        ) : (
          <EmptyState>No one has shared a worksheet with this workspace yet.</EmptyState>
        )
      ) : null}
    </ModalDialog>
  );
}
