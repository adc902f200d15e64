import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { clock, duration, ms, tokens } from '../format';
import { openInvocation } from '../route';
import type { AgentDescription, InvocationSummary } from '../types';

const STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'];
const POLL_MS = 1000;

/** Recent roots, live, filtered by agent and status (docs/guides/console.md); a click opens one. */
export function InvocationList() {
  const [agent, setAgent] = useState('');
  const [status, setStatus] = useState('');
  const [items, setItems] = useState<InvocationSummary[] | undefined>();
  const [agents, setAgents] = useState<string[]>([]);
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    api<{ agents: AgentDescription[] }>('/agents').then(
      (r) => setAgents(r.agents.map((a) => a.name)),
      () => {}, // not ready yet (503): the filter lists the agents seen meanwhile
    );
  }, []);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const query = new URLSearchParams({ limit: '50' });
    if (agent) query.set('agent', agent);
    if (status) query.set('status', status);
    const poll = async () => {
      try {
        const page = await api<{ items: InvocationSummary[] }>(`/invocations?${query}`);
        if (stopped) return;
        setItems(page.items);
        setError(undefined);
      } catch (e) {
        if (!stopped) setError((e as Error).message);
      }
      if (!stopped) timer = setTimeout(poll, document.hidden ? POLL_MS * 5 : POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [agent, status]);

  const known = [...new Set([...agents, ...(items ?? []).map((i) => i.agent)])].sort();
  return (
    <section class="list-page">
      <div class="filters">
        <label>
          Agent{' '}
          <select data-role="filter-agent" value={agent} onChange={(e) => setAgent(e.currentTarget.value)}>
            <option value="">all</option>
            {known.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status{' '}
          <select data-role="filter-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">all</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <span class="live" title="The list reads the mesh every second">
          live
        </span>
      </div>
      {error && <p class="error">{error}</p>}
      <table class="invocations">
        <thead>
          <tr>
            <th>Agent</th>
            <th>Status</th>
            <th>Started</th>
            <th>Duration</th>
            <th>Tokens</th>
            <th>Id</th>
          </tr>
        </thead>
        <tbody>
          {(items ?? []).map((i) => (
            <tr
              key={i.id}
              data-role="invocation-row"
              data-invocation-id={i.id}
              data-status={i.status}
              onClick={() => openInvocation(i.id)}
            >
              <td data-label="Agent">
                <a href={`#/invocations/${i.id}`}>{i.agent}</a>
              </td>
              <td data-label="Status">
                <span class={`status s-${i.status}`}>{i.status}</span>
              </td>
              <td data-label="Started">{clock(i.createdAt)}</td>
              <td data-label="Duration">{duration(elapsed(i))}</td>
              <td data-label="Tokens">{tokens(i.treeUsage ?? i.usage)}</td>
              <td data-label="Id" class="id">
                {i.id}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {items?.length === 0 && <p class="empty">No invocations{agent || status ? ' match' : ' yet'}.</p>}
    </section>
  );
}

function elapsed(i: InvocationSummary): number | undefined {
  const start = ms(i.startedAt) ?? ms(i.createdAt);
  if (start === undefined) return undefined;
  return (ms(i.finishedAt) ?? Date.now()) - start;
}
