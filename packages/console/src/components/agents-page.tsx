import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import type { AgentDescription } from '../types';
import { InvokeForm } from './invoke-form';
import { JsonView } from './json-view';

/** Every agent the key may use: description, callables, schemas, and a form that invokes it. */
export function AgentsPage() {
  const [agents, setAgents] = useState<AgentDescription[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = () =>
      api<{ agents: AgentDescription[] }>('/agents').then(
        (r) => !stopped && setAgents(r.agents),
        (e: Error & { status?: number }) => {
          if (stopped) return;
          setError(e.message);
          // 503 until the tool-host published its catalogue: ask again shortly.
          if (e.status === 503) timer = setTimeout(load, 1000);
        },
      );
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);
  if (!agents)
    return <section class="agents-page">{error ? <p class="error">{error}</p> : <p>Loading…</p>}</section>;
  return (
    <section class="agents-page">
      {agents.map((a) => (
        <article key={a.name} class="agent-card" data-role="agent" data-agent={a.name} id={`agent-${a.name}`}>
          <h2>{a.name}</h2>
          {a.description && <p>{a.description}</p>}
          <h3>Callables</h3>
          {a.callables.length === 0 ? (
            <p class="hint">None: its model answers without tools.</p>
          ) : (
            <ul class="callables">
              {a.callables.map((c) => (
                <li key={c.name}>
                  <code>{c.name}</code>
                  {a.approvals?.includes(c.name) && <span class="badge">needs approval</span>} {c.description}
                </li>
              ))}
            </ul>
          )}
          <details>
            <summary>Input and output schemas</summary>
            <h4>Input</h4>
            <JsonView value={a.input} label={`Input schema of ${a.name}`} />
            <h4>Output</h4>
            <JsonView value={a.output} label={`Output schema of ${a.name}`} />
          </details>
          <h3>Invoke</h3>
          <InvokeForm agent={a} />
        </article>
      ))}
    </section>
  );
}
