import { useState } from 'preact/hooks';
import { api } from '../api';
import { openInvocation } from '../route';
import type { CallDetail, CallView, InvocationView } from '../types';

/**
 * "Re-run from here" (`data-action="fork"`, every call) and "Edit result and re-run"
 * (`data-action="fork-edit"`, tool calls and delegations) of docs/guides/durability.md: each starts a fork of
 * the node from the call — reusing every call before it — and opens the new run.
 */
export function ForkActions({ nodeId, call }: { nodeId: string; call: CallView }) {
  const [editing, setEditing] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const editable = call.kind === 'tool' || call.kind === 'subagent';
  const fork = async (body: { fromCallId: string; result?: unknown }) => {
    setBusy(true);
    setError(undefined);
    try {
      const view = await api<InvocationView>(`/invocations/${nodeId}/fork?wait=0`, { method: 'POST', body });
      openInvocation(view.id);
    } catch (e) {
      setError((e as Error).message);
      setBusy(false);
    }
  };
  const edit = async () => {
    // Starts from the result it had, when it has one.
    let text = '';
    try {
      const d = await api<CallDetail>(`/invocations/${nodeId}/calls/${encodeURIComponent(call.callId)}`);
      text = readable(d.result?.content ?? '');
    } catch {
      // no detail: an empty result to write
    }
    setEditing(text);
  };
  return (
    <>
      <span class="call-actions">
        <button
          type="button"
          data-action="fork"
          disabled={busy}
          title="Re-run from here: a new run reusing every call before this one"
          aria-label={`Re-run from here (${call.callId})`}
          onClick={() => fork({ fromCallId: call.callId })}
        >
          ↻
        </button>
        {editable && (
          <button
            type="button"
            data-action="fork-edit"
            disabled={busy}
            title="Edit result and re-run: a new run in which this call gave the result you write"
            aria-label={`Edit result and re-run (${call.callId})`}
            aria-expanded={editing !== undefined}
            onClick={() => (editing === undefined ? void edit() : setEditing(undefined))}
          >
            ✎
          </button>
        )}
      </span>
      {editing !== undefined && (
        <form
          class="fork-edit"
          onSubmit={(e) => {
            e.preventDefault();
            const text = (e.currentTarget.elements.namedItem('result') as HTMLTextAreaElement).value;
            void fork({ fromCallId: call.callId, result: writtenValue(text) });
          }}
        >
          <label>
            Result of <code>{call.callId}</code> (JSON, or plain text)
            <textarea
              name="result"
              data-role="fork-result"
              rows={4}
              spellcheck={false}
              defaultValue={editing}
            />
          </label>
          <button type="submit" data-action="fork-submit" disabled={busy}>
            Re-run with this result
          </button>
          <button type="button" class="quiet" onClick={() => setEditing(undefined)}>
            Close
          </button>
        </form>
      )}
      {error && <p class="error">{error}</p>}
    </>
  );
}

/** A tool message's text for editing: pretty JSON when it is JSON, else as is. */
function readable(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The value written: JSON when it parses, else the text itself (a string result). */
function writtenValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
