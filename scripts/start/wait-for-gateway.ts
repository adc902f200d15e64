/** Waiting for the mesh's own gateway to be ready, told apart from another mesh's on the same port. */
import { agentmeshGatewayPid } from '../check-ports.js';
import type { Service } from '../spawn-service.js';

export interface GatewayAddress {
  port: number;
  host: string;
  url: string;
}

/**
 * 'ready' once OUR gateway is ready: /healthz answers with its pid (not another mesh's gateway that
 * took the port meanwhile), then /readyz with 200; 'exited' if it exits first, 'timeout' when the
 * time runs out (or the mesh is stopping).
 */
export async function waitForOwnGateway(
  service: Service,
  timeoutMs: number,
  gateway: GatewayAddress,
  stopping: () => boolean,
): Promise<'ready' | 'exited' | 'timeout'> {
  let ours = false;
  for (const end = Date.now() + timeoutMs; Date.now() < end && !stopping(); ) {
    if (!service.running) return 'exited';
    ours ||= (await agentmeshGatewayPid(gateway.port, gateway.host)) === service.child.pid;
    if (ours) {
      try {
        const res = await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(2000) });
        await res.body?.cancel();
        if (res.status === 200) return 'ready';
      } catch {
        // not listening yet
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return service.running ? 'timeout' : 'exited';
}
