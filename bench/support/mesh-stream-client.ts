import { Agent, request } from 'undici';
import type { ClientName } from './mesh-client.js';

/** When the parts of one invoke stream arrived, in ms since its request was sent. */
export interface StreamTimes {
  /** The response's head: the gateway answers 200 at once, before the first model call. */
  firstByteMs: number;
  /** The first `delta` event (Infinity when none came). */
  firstDeltaMs: number;
  /** The stream's end, which comes right after the root's terminal status. */
  endMs: number;
  /** The invocation, root of its tree. */
  rootId: string;
  /** Delta events received. */
  deltas: number;
}

/** Runs one agent to its end through `POST /agents/{name}/invoke?stream=true`, timing what arrives. */
export type MeshStream = (agent: string) => Promise<StreamTimes>;

/**
 * The streaming invoke (docs/guides/streaming.md) through either client of mesh-client.ts: undici's
 * `request` on a keep-alive pool or Node's global fetch, each reading the body as it arrives. The
 * stream must end with the root `succeeded`, else the run is an error carrying its last status.
 */
export function meshStreamClient(gatewayUrl: string, via: ClientName = 'undici'): MeshStream {
  const dispatcher = new Agent({ keepAliveTimeout: 30_000 });
  const open = async (
    url: string,
    body: string,
  ): Promise<{ status: number; chunks: AsyncIterable<Uint8Array> }> => {
    const headers = { 'content-type': 'application/json' };
    if (via === 'fetch') {
      const res = await fetch(url, { method: 'POST', headers, body });
      if (!res.body) throw new Error(`${url}: ${res.status} without a body`);
      return { status: res.status, chunks: res.body };
    }
    const res = await request(url, { method: 'POST', headers, body, dispatcher });
    return { status: res.statusCode, chunks: res.body };
  };
  return async (agent) => {
    const t0 = performance.now();
    const { status, chunks } = await open(
      `${gatewayUrl}/agents/${agent}/invoke?stream=true`,
      JSON.stringify({ prompt: 'go' }),
    );
    const firstByteMs = performance.now() - t0;
    let firstDeltaMs = Number.POSITIVE_INFINITY;
    let deltas = 0;
    let text = '';
    const statuses: { invocationId: string; data: { id?: string; status: string } }[] = [];
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of chunks) {
      const piece = decoder.decode(chunk, { stream: true });
      if (status !== 200) text += piece;
      pending += piece;
      for (let end = pending.indexOf('\n\n'); end >= 0; end = pending.indexOf('\n\n')) {
        const block = pending.slice(0, end);
        pending = pending.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        if (event === 'delta') {
          deltas++;
          if (deltas === 1) firstDeltaMs = performance.now() - t0;
        } else if (event === 'status') statuses.push(JSON.parse(/^data: (.*)$/m.exec(block)![1]!));
      }
    }
    const endMs = performance.now() - t0;
    // The first event's data is the InvocationView; the root's events carry its id.
    const rootId = statuses[0]?.data.id ?? '';
    const last = statuses.filter((s) => s.invocationId === rootId).at(-1);
    if (status !== 200 || last?.data.status !== 'succeeded')
      throw new Error(`${agent}: ${status} ${text.slice(0, 300)} ${JSON.stringify(last).slice(0, 300)}`);
    return { firstByteMs, firstDeltaMs, endMs, rootId, deltas };
  };
}
