/** Runs one agent to its end through the gateway's public contract; resolves with the output. */
export type MeshInvoke = (agent: string, input?: unknown) => Promise<string>;

/** The agents' bodies: a ReAct agent takes `{prompt}`, the chain's children `{input}`. */
const bodyOf = (agent: string) => (agent === 'child' ? { input: 'x' } : { prompt: 'go' });

/**
 * `POST /agents/{name}/invoke?wait=120` over fetch's keep-alive pool; anything but a 200 with
 * status `succeeded` is an error carrying the view.
 */
export function meshClient(gatewayUrl: string): MeshInvoke {
  return async (agent, input = bodyOf(agent)) => {
    const res = await fetch(`${gatewayUrl}/agents/${agent}/invoke?wait=120`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    const view = (await res.json()) as { status?: string; output?: unknown };
    if (res.status !== 200 || view.status !== 'succeeded')
      throw new Error(`${agent}: ${res.status} ${JSON.stringify(view).slice(0, 500)}`);
    return typeof view.output === 'string' ? view.output : JSON.stringify(view.output);
  };
}
