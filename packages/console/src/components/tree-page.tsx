import { type ReadonlySignal, useComputed } from '@preact/signals';
import { useEffect, useMemo } from 'preact/hooks';
import { duration, ms } from '../format';
import { TreeStore } from '../tree-store';
import { isTerminal } from '../types';
import { CallDetail } from './call-detail';
import { NodeView } from './node-view';

const CONNECTION: Record<string, string> = {
  connecting: 'connecting…',
  live: 'live',
  reconnecting: 'reconnecting…',
  ended: 'finished',
  failed: 'not followed',
};

/** One invocation's tree as a waterfall, followed live, with the call detail beside it. */
export function TreePage({ id }: { id: string }) {
  const store = useMemo(() => new TreeStore(id), [id]);
  useEffect(() => {
    store.start();
    return () => store.close();
  }, [store]);
  // The time axis: from the root's creation to the last end (or now, while any node runs). Bars
  // are placed by CSS from these two variables, so a tick rewrites one style, not every bar.
  const axis = useComputed(() => {
    const t0 = store.origin.value;
    if (t0 === undefined) return { span: 1, now: 0 };
    void store.size.value; // a node added is a node to read
    let end = t0;
    let open = false;
    for (const n of store.nodes.values()) {
      const v = n.value.view;
      const status = n.value.status;
      if (!status || !isTerminal(status)) open = true;
      end = Math.max(end, ms(v?.finishedAt) ?? t0);
    }
    const now = store.now.value;
    if (open) end = Math.max(end, now);
    return { span: Math.max(1, end - t0), now: Math.max(0, Math.min(now, end) - t0) };
  });
  const style = useComputed(() => `--span: ${axis.value.span}; --now: ${axis.value.now}`);
  if (store.notFound.value) {
    return (
      <section class="tree-page">
        <p class="error">
          No invocation <code>{id}</code> (or another API key started it).
        </p>
      </section>
    );
  }
  const root = store.node(id)?.value;
  return (
    <section class="tree-page">
      <header class="tree-head">
        <a href="#/invocations">← Invocations</a>
        <h1>
          {root?.agent || 'Invocation'} <code class="id">{id}</code>
        </h1>
        <span class={`conn c-${store.connection.value}`}>{CONNECTION[store.connection.value]}</span>
        {root?.view?.forkedFrom && (
          <span class="forked">
            forked from{' '}
            <a href={`#/invocations/${root.view.forkedFrom.invocationId}`}>
              {root.view.forkedFrom.invocationId}
            </a>{' '}
            at <code>{root.view.forkedFrom.callId}</code>
          </span>
        )}
      </header>
      <div class="tree-layout">
        <div class="tree" style={style}>
          <Axis span={axis} />
          <NodeView store={store} id={id} />
        </div>
        <CallDetail store={store} />
      </div>
    </section>
  );
}

/** The time axis over the bars: ticks at every quarter of the tree's span. */
function Axis({ span }: { span: ReadonlySignal<{ span: number }> }) {
  return (
    <div class="row axis" aria-hidden="true">
      <div class="label">agent · status · duration · tokens (own / tree) · runner</div>
      <span class="track ticks">
        {[0, 0.25, 0.5, 0.75, 1].map((f) => (
          <span key={f} class="tick" style={{ left: `${f * 100}%` }}>
            {duration(span.value.span * f) || '0'}
          </span>
        ))}
      </span>
    </div>
  );
}
