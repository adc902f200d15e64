import { DEFAULT_REMOTE_REQUEST_SECONDS } from '@agentmesh/shared';
import { timeoutSignal } from '../timeout-signal.js';
import { RemoteError } from './remote-error.js';

/** Bytes of one A2A response (a card, a task, a whole event stream) a runner reads at most. */
export const MAX_REMOTE_RESPONSE_BYTES = 4 * 1024 * 1024;

/** How long one request to a remote agent may take, headers and body (MESH_REMOTE_REQUEST_SECONDS). */
export const DEFAULT_REMOTE_REQUEST_MS = DEFAULT_REMOTE_REQUEST_SECONDS * 1000;

// Redirects one request follows, each to an allowed origin.
const MAX_REDIRECTS = 5;

/** What the `fetch` of one remote agent sends, where, and for how long. */
export interface RemoteFetchOptions {
  /** Sent with every request (a header the client sets itself wins, e.g. `A2A-Version`). */
  headers: Readonly<Record<string, string>>;
  /** The origins requests may go to: the card's, and the config's `allowedOrigins`. */
  origins: ReadonlySet<string>;
  /** Each request ends with an error past this, whether its headers or its body are late. */
  timeoutMs?: number;
  maxBytes?: number;
}

/**
 * The `fetch` the A2A client of one remote agent uses (docs/guides/a2a-and-remote-agents.md, docs/reference/bounds.md): requests only to allowed
 * origins (a card naming its interface elsewhere, or a redirect there, is refused: the configured
 * headers are secrets for the card's origin, and a card must not aim runners at internal
 * addresses), each one ended at `timeoutMs` (or earlier by the caller's signal) however slowly its
 * headers or bytes come, and its body cut off with an error past `maxBytes`.
 */
export function remoteFetch(opts: RemoteFetchOptions): typeof fetch {
  const maxBytes = opts.maxBytes ?? MAX_REMOTE_RESPONSE_BYTES;
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(opts.headers))
      if (!headers.has(name)) headers.set(name, value);
    const never = new AbortController().signal;
    const bounded = timeoutSignal(init?.signal ?? never, opts.timeoutMs ?? DEFAULT_REMOTE_REQUEST_MS);
    let res: Response;
    try {
      let url = new URL(input instanceof Request ? input.url : String(input));
      for (let hops = 0; ; hops++) {
        refuseOrigin(url, opts.origins);
        res = await fetch(url, { ...init, headers, signal: bounded.signal, redirect: 'manual' });
        const location = res.headers.get('location');
        if (res.status < 300 || res.status > 399 || location === null) break;
        await res.body?.cancel();
        if (hops >= MAX_REDIRECTS)
          throw new RemoteError(`more than ${MAX_REDIRECTS} redirects from ${url.origin}`, false);
        url = new URL(location, url);
      }
    } catch (e) {
      bounded.clear();
      throw e;
    }
    if (!res.body) {
      bounded.clear();
      return res;
    }
    let seen = 0;
    const cap = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) {
          bounded.clear();
          controller.error(new Error(`the remote answer is larger than ${maxBytes} bytes`));
        } else controller.enqueue(chunk);
      },
      flush: () => bounded.clear(),
    });
    return new Response(res.body.pipeThrough(cap), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}

/** Refuses (for good: not retried) a request to an origin the remote agent's config does not allow. */
function refuseOrigin(url: URL, origins: ReadonlySet<string>): void {
  if (origins.has(url.origin)) return;
  throw new RemoteError(
    `refused a request to ${url.origin}: not the agent card's origin, nor one of remote.allowedOrigins`,
    false,
  );
}
