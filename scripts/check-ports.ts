import net from 'node:net';
import { findPortOwner } from './port-owner.js';

/** A port npm start would listen on, named by the variable that sets it. */
export interface WantedPort {
  variable: string;
  port: number;
}

/**
 * What stands in the way of listening on each port at `host`, one sentence per problem (none:
 * all free): the same port wanted twice, or a port already taken — by what, where that can be told
 * (an agentmesh gateway answering /healthz with its pid, or the owning process from /proc).
 */
export async function checkPorts(wanted: WantedPort[], host: string): Promise<string[]> {
  const problems: string[] = [];
  const seen = new Map<number, string>();
  for (const { variable, port } of wanted) {
    const first = seen.get(port);
    if (first) {
      problems.push(`${variable} and ${first} are both ${port}: every service needs a port of its own.`);
      continue;
    }
    seen.set(port, variable);
    const error = await tryListen(port, host);
    if (!error) continue;
    if (error !== 'EADDRINUSE') {
      problems.push(`${variable}=${port}: cannot listen on ${host}:${port} (${error}).`);
      continue;
    }
    problems.push(`${variable}=${port}: port ${port} is already taken${await describeOwner(port, host)}.`);
  }
  return problems;
}

/** Undefined when `host:port` can be listened on right now, else the error code. */
function tryListen(port: number, host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

async function describeOwner(port: number, host: string): Promise<string> {
  const [gatewayPid, owner] = await Promise.all([agentmeshGatewayPid(port, host), findPortOwner(port)]);
  if (gatewayPid) {
    const command = owner?.pid === gatewayPid ? `, ${shorten(owner.command)}` : '';
    return ` by another agentmesh gateway (pid ${gatewayPid}${command}; is another npm start running?)`;
  }
  return owner ? ` by pid ${owner.pid} (${shorten(owner.command)})` : '';
}

const shorten = (command: string) => (command.length > 120 ? `${command.slice(0, 119)}…` : command);

/** The pid an agentmesh gateway on the port reports in /healthz's `x-agentmesh-pid`, if one answers. */
export async function agentmeshGatewayPid(port: number, host: string): Promise<number | undefined> {
  const at = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  // A referenced timer: fetch's sockets alone may not keep the process alive while a silent
  // listener holds the request (AbortSignal.timeout's timer does not either).
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 1000);
  try {
    const res = await fetch(`http://${at.includes(':') ? `[${at}]` : at}:${port}/healthz`, {
      signal: abort.signal,
    });
    await res.body?.cancel();
    const pid = Number(res.headers.get('x-agentmesh-pid'));
    return res.status === 200 && Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
