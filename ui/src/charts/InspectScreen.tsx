// The page for one actor's state chart: /inspect/{kind}/{id} (query, sqlSession, agentConnection, storageMigration…).
import { StateChart } from './StateChart.tsx';

export function InspectScreen(props: { kind: string; id: string }) {
  return (
    <section>
      <h1>
        {props.kind} <span className="mono">{props.id}</span>
      </h1>
      <StateChart kind={props.kind} id={props.id} />
    </section>
  );
}
