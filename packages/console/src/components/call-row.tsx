import { useComputed } from '@preact/signals';
import { config } from '../config';
import { duration, ms } from '../format';
import type { TreeStore } from '../tree-store';
import type { CallView } from '../types';
import { ForkActions } from './fork-actions';
import { Bar } from './node-view';

const KIND: Record<string, string> = { model: 'model', tool: 'tool', subagent: 'delegation' };

/**
 * One durable call (docs/guides/console.md): `data-call-id`, `data-kind` and, when re-run after a crash,
 * `data-attempt`; its button (the whole row) shows its content in the call detail.
 */
export function CallRow({ store, nodeId, call }: { store: TreeStore; nodeId: string; call: CallView }) {
  // Only the rows whose selection changes render again (a tree may have thousands).
  const selected = useComputed(() => {
    const sel = store.selected.value;
    return sel.state !== 'none' && sel.sel.nodeId === nodeId && sel.sel.callId === call.callId;
  }).value;
  const t0 = store.t0();
  const start = ms(call.startedAt);
  const end = ms(call.finishedAt);
  const open = end === undefined && (call.status === 'started' || call.status === 'approved');
  const took = start === undefined ? undefined : (end ?? (open ? store.now.value : start)) - start;
  return (
    <div
      class={`call k-${call.kind}${selected ? ' selected' : ''}${config.value?.fork ? ' forkable' : ''}`}
      data-call-id={call.callId}
      data-kind={call.kind}
      {...(call.attempt && call.attempt > 1 ? { 'data-attempt': String(call.attempt) } : {})}
    >
      <button
        type="button"
        class="row call-open"
        aria-pressed={selected}
        onClick={() => store.select(nodeId, call.callId)}
      >
        <span class="label">
          <span class="kind">{KIND[call.kind]}</span> <span class="call-name">{call.name}</span>
          <span class={`status s-${call.status}`}>{call.status.replace('_', ' ')}</span>
          <span class="meta">{duration(took)}</span>
          {call.reused && (
            <span class="badge" title="Reused from the run this one was forked from">
              reused
            </span>
          )}
          {call.resultGiven && (
            <span class="badge" title="Its result was given when this run was forked: it never ran">
              result given
            </span>
          )}
          {call.attempt && call.attempt > 1 && (
            <span class="rerun" title="Re-run after a crash">
              attempt {call.attempt}
            </span>
          )}
        </span>
        {start === undefined ? (
          <span class="track" />
        ) : (
          <Bar start={start - t0} end={open ? undefined : (end ?? start) - t0} status={call.status} />
        )}
      </button>
      {config.value?.fork && <ForkActions nodeId={nodeId} call={call} />}
    </div>
  );
}
