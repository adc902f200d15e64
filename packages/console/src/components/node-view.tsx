import { useState } from 'preact/hooks';
import { duration, ms, nodeText, tokens } from '../format';
import type { TreeStore } from '../tree-store';
import type { CallView, InvocationView, PendingApproval } from '../types';
import { isTerminal } from '../types';
import { CallRow } from './call-row';

interface Props {
  store: TreeStore;
  id: string;
}

/**
 * One node of the tree (docs/guides/console.md contract): `[data-role="node"]` with its id, agent and status,
 * nested inside its parent's node element under the delegation that started it; its header with
 * the waterfall bar, approvals, Cancel, its own `[data-role="output"]`, then its calls, each
 * delegation followed by the child it started. It renders again only when its own node changes
 * (the signals integration skips a component whose props are equal and whose signals are not).
 */
export function NodeView({ store, id }: Props) {
  // A node not known yet is rendered again once nodes are added (its signal then exists).
  const known = store.node(id);
  if (!known) void store.size.value;
  const node = known?.value;
  const [open, setOpen] = useState(true);
  if (!node?.view) return null;
  const { view } = node;
  const status = node.status ?? view.status;
  const t0 = store.t0();
  const start = ms(view.startedAt) ?? ms(view.createdAt) ?? t0;
  const end = ms(view.finishedAt);
  const runners = [...new Set(view.calls.map((c) => c.runner).filter(Boolean))].join(', ');
  const label = `${view.agent} (${status})`;
  return (
    <div
      class={`node depth-${Math.min(node.depth, 6)}`}
      data-role="node"
      data-invocation-id={view.id}
      data-agent={view.agent}
      data-status={status}
      {...(node.parentCallId ? { 'data-parent-call-id': node.parentCallId } : {})}
    >
      <div class="row node-head">
        <div class="label">
          <button
            type="button"
            class="twisty"
            aria-expanded={open}
            aria-label={`${open ? 'Collapse' : 'Expand'} the calls of ${label}`}
            onClick={() => setOpen(!open)}
          >
            {open ? '▾' : '▸'}
          </button>
          <span class="agent">{view.agent}</span>
          <span class={`status s-${status}`}>{status}</span>
          <span class="meta">
            {duration((end ?? store.now.value) - start)}
            {' · '}
            <span title="Its own tokens, and with its whole subtree">
              {tokens(view.usage)} / {tokens(view.treeUsage)} tok
            </span>
            {runners && <span class="runner"> · {runners}</span>}
          </span>
          {!isTerminal(status) && <CancelButton store={store} id={view.id} label={label} />}
        </div>
        <Bar start={start - t0} end={end === undefined ? undefined : end - t0} status={status} />
      </div>
      {view.error && (
        <p class="node-error">
          <code>{view.error.code}</code> {view.error.message}
        </p>
      )}
      {!isTerminal(status) &&
        view.pendingApprovals.map((p) => <Approval key={p.callId} store={store} view={view} pending={p} />)}
      <pre class="output" data-role="output">
        {nodeText(view, node.texts)}
      </pre>
      <div class="calls" hidden={!open}>
        {view.calls.map((c) => (
          <CallAndChild key={c.callId} store={store} node={view} call={c} />
        ))}
      </div>
    </div>
  );
}

function CallAndChild({ store, node, call }: { store: TreeStore; node: InvocationView; call: CallView }) {
  return (
    <>
      <CallRow store={store} nodeId={node.id} call={call} />
      {call.kind === 'subagent' && call.childId && (
        <div class="children">
          <NodeView store={store} id={call.childId} />
        </div>
      )}
    </>
  );
}

/** A bar from `start` to `end` (ms after the tree's start; open while running) on the tree's axis. */
export function Bar({ start, end, status }: { start: number; end: number | undefined; status: string }) {
  const style = { '--s': String(Math.max(0, start)), '--e': end === undefined ? 'var(--now)' : String(end) };
  return (
    <span class="track" aria-hidden="true">
      <span class={`bar b-${status}`} style={style} />
    </span>
  );
}

function CancelButton({ store, id, label }: { store: TreeStore; id: string; label: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  return (
    <>
      <button
        type="button"
        class="danger"
        data-action="cancel"
        aria-label={`Cancel ${label}`}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            await store.cancel(id);
          } catch (e) {
            setError((e as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        Cancel
      </button>
      {error && <span class="error">{error}</span>}
    </>
  );
}

/** A pending approval (docs/guides/approvals-and-budgets.md): the call, its arguments, Approve, and Reject with a reason. */
function Approval({
  store,
  view,
  pending,
}: {
  store: TreeStore;
  view: InvocationView;
  pending: PendingApproval;
}) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const decide = async (approved: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      await store.decide(view.id, pending.callId, approved, reason);
    } catch (e) {
      setError((e as Error).message);
      setBusy(false);
    }
  };
  return (
    <fieldset class="approval">
      <legend>
        <strong>Approval needed:</strong> <code>{pending.name}</code>
      </legend>
      <pre class="json">{JSON.stringify(pending.args, null, 2)}</pre>
      <div class="approval-actions">
        <button type="button" data-action="approve" disabled={busy} onClick={() => decide(true)}>
          Approve
        </button>
        <input
          data-role="reject-reason"
          type="text"
          placeholder="Reason (optional)"
          aria-label={`Reason to reject ${pending.name}`}
          value={reason}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
        <button
          type="button"
          class="danger"
          data-action="reject"
          disabled={busy}
          onClick={() => decide(false)}
        >
          Reject
        </button>
        {error && <span class="error">{error}</span>}
      </div>
    </fieldset>
  );
}
