import { Agent, request } from 'undici';

/** Runs one agent to its end through the gateway's public contract; resolves with the output. */
export type MeshInvoke = (agent: string, input?: unknown) => Promise<string>;

/** The two ordinary clients of a Node caller every client-facing figure is reported for. */
export type ClientName = 'undici' | 'fetch';

/** The agents' bodies: a ReAct agent takes `{prompt}`, the chain's children `{input}`. */
const bodyOf = (agent: string) => (agent === 'child' ? { input: 'x' } : { prompt: 'go' });

/**
 * `POST /agents/{name}/invoke?wait=120`; anything but a 200 with status `succeeded` is an error
 * carrying the view. `via: 'undici'` is undici's `request` on a keep-alive pool with no cap on its
 * connections (undici's default, as a caller gets it), the fastest Node client; `via: 'fetch'` is
 * Node's global fetch as any caller uses it, undici too under the WHATWG Request/Response and streams
 * layers, which cost a run a few tenths of a millisecond on a 2-core VM.
 */
export function meshClient(gatewayUrl: string, via: ClientName = 'undici'): MeshInvoke {
  const dispatcher = new Agent({ keepAliveTimeout: 30_000 });
  return async (agent, input = bodyOf(agent)) => {
    const url = `${gatewayUrl}/agents/${agent}/invoke?wait=120`;
    const { status, view } = await postJson(url, JSON.stringify(input), via, dispatcher);
    const v = view as { status?: string; output?: unknown };
    if (status !== 200 || v.status !== 'succeeded')
      throw new Error(`${agent}: ${status} ${JSON.stringify(view).slice(0, 500)}`);
    return typeof v.output === 'string' ? v.output : JSON.stringify(v.output);
  };
}

/** POSTs a JSON body through `via` (undici's `request` on `dispatcher`, or Node's `fetch`); the answer's status and parsed body. */
export async function postJson(
  url: string,
  body: string,
  via: ClientName,
  dispatcher: Agent,
): Promise<{ status: number; view: unknown }> {
  const headers = { 'content-type': 'application/json' };
  if (via === 'fetch') {
    const res = await fetch(url, { method: 'POST', headers, body });
    return { status: res.status, view: await res.json() };
  }
  const res = await request(url, { method: 'POST', headers, body, dispatcher });
  return { status: res.statusCode, view: await res.body.json() };
}
