import { Agent, request } from 'undici';

/** Runs one agent to its end through the gateway's public contract; resolves with the output. */
export type MeshInvoke = (agent: string, input?: unknown) => Promise<string>;

/** The agents' bodies: a ReAct agent takes `{prompt}`, the chain's children `{input}`. */
const bodyOf = (agent: string) => (agent === 'child' ? { input: 'x' } : { prompt: 'go' });

/**
 * `POST /agents/{name}/invoke?wait=120`; anything but a 200 with status `succeeded` is an error
 * carrying the view. The client a Node caller at its fastest uses: undici's `request` on a
 * keep-alive pool (`via: 'undici'`, the bench's). `via: 'fetch'` is Node's global fetch — undici
 * too, under the WHATWG Request/Response and streams layers, which cost a run a few tenths of a
 * millisecond on this machine; the round trips report the single run through it as well.
 */
export function meshClient(gatewayUrl: string, via: 'undici' | 'fetch' = 'undici'): MeshInvoke {
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
  const post = async (agent: string, body: string): Promise<{ status: number; view: unknown }> => {
    const url = `${gatewayUrl}/agents/${agent}/invoke?wait=120`;
    const headers = { 'content-type': 'application/json' };
    if (via === 'fetch') {
      const res = await fetch(url, { method: 'POST', headers, body });
      return { status: res.status, view: await res.json() };
    }
    const res = await request(url, { method: 'POST', headers, body, dispatcher });
    return { status: res.statusCode, view: await res.body.json() };
  };
  return async (agent, input = bodyOf(agent)) => {
    const { status, view } = await post(agent, JSON.stringify(input));
    const v = view as { status?: string; output?: unknown };
    if (status !== 200 || v.status !== 'succeeded')
      throw new Error(`${agent}: ${status} ${JSON.stringify(view).slice(0, 500)}`);
    return typeof v.output === 'string' ? v.output : JSON.stringify(v.output);
  };
}
