import { duration, ms } from '../format';
import type { TreeStore } from '../tree-store';
import type { CallDetail as Detail } from '../types';
import { JsonView } from './json-view';

/** What the selected call did (docs/guides/console.md `[data-role="call-detail"]`), from GET …/calls/{callId}. */
export function CallDetail({ store }: { store: TreeStore }) {
  const sel = store.selected.value;
  return (
    <aside class="call-detail" data-role="call-detail" aria-live="polite" aria-label="Call detail">
      {sel.state === 'none' && <p class="hint">Select a call to see what it was asked and what it gave.</p>}
      {sel.state === 'loading' && <p class="hint">Loading {sel.sel.callId}…</p>}
      {sel.state === 'error' && <p class="error">{sel.message}</p>}
      {sel.state === 'ok' && <DetailBody detail={sel.detail} nodeId={sel.sel.nodeId} />}
    </aside>
  );
}

function DetailBody({ detail: d, nodeId }: { detail: Detail; nodeId: string }) {
  const took = (ms(d.finishedAt) ?? Number.NaN) - (ms(d.startedAt) ?? Number.NaN);
  return (
    <div>
      <h2>
        {d.kind === 'subagent' ? 'delegation' : d.kind} <code>{d.name}</code>
      </h2>
      <dl class="facts">
        <dt>call</dt>
        <dd>
          <code>{d.callId}</code> of <code>{nodeId}</code>
        </dd>
        <dt>status</dt>
        <dd>
          <span class={`status s-${d.status}`}>{d.status}</span>
          {d.attempt > 1 && <span class="rerun"> attempt {d.attempt} (re-run after a crash)</span>}
        </dd>
        {Number.isFinite(took) && (
          <>
            <dt>took</dt>
            <dd>{duration(took)}</dd>
          </>
        )}
        {d.runner && (
          <>
            <dt>runner</dt>
            <dd>{d.runner}</dd>
          </>
        )}
        {d.usage && (
          <>
            <dt>tokens</dt>
            <dd>
              {d.usage.promptTokens} prompt + {d.usage.completionTokens} completion
            </dd>
          </>
        )}
        {d.decision && (
          <>
            <dt>decision</dt>
            <dd>
              {d.decision.approved ? 'approved' : 'rejected'}
              {d.decision.reason ? `: ${d.decision.reason}` : ''}
            </dd>
          </>
        )}
      </dl>
      {d.note && <p class="hint">{d.note}</p>}
      {d.truncated && <p class="hint">Some text is longer than 256 KiB and is cut there.</p>}
      {d.error && (
        <p class="error">
          <code>{d.error.code}</code> {d.error.message}
        </p>
      )}
      {d.kind === 'model' ? <ModelCall d={d} /> : <ToolCall d={d} />}
    </div>
  );
}

function ModelCall({ d }: { d: Detail }) {
  return (
    <>
      <h3>Messages</h3>
      <ol class="messages">
        {(d.request.messages ?? []).map((m, i) => (
          <li key={i} class={`msg m-${m.role}`}>
            <span class="role">{m.role}</span>
            {m.tool_call_id && <code> {m.tool_call_id}</code>}
            {m.content !== null && <pre>{m.content}</pre>}
            {m.tool_calls?.map((c) => (
              <pre key={c.id}>
                {c.function.name}({c.function.arguments})
              </pre>
            ))}
          </li>
        ))}
      </ol>
      {d.result && (
        <>
          <h3>Reply</h3>
          {d.result.content && <pre class="reply">{d.result.content}</pre>}
          {d.result.toolCalls?.map((c) => (
            <pre key={c.id} class="reply">
              {c.name}({c.arguments})
            </pre>
          ))}
        </>
      )}
    </>
  );
}

function ToolCall({ d }: { d: Detail }) {
  return (
    <>
      <h3>Arguments</h3>
      <JsonView value={d.request.arguments ?? null} label="Arguments" />
      {d.request.childId && (
        <p>
          Child: <a href={`#/invocations/${d.request.childId}`}>{d.request.childId}</a>
        </p>
      )}
      {d.result && (
        <>
          <h3>Result</h3>
          <JsonView value={readable(d.result.content)} label="Result" />
          {d.result.output !== undefined && (
            <>
              <h3>Child output</h3>
              <JsonView value={d.result.output} label="Child output" />
            </>
          )}
        </>
      )}
    </>
  );
}

/** A tool message's text, as JSON when it is JSON (pretty printed), else as is. */
function readable(text: string | null | undefined): unknown {
  if (!text) return text ?? '';
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
