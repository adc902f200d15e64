/** A failed A2A exchange with a remote agent: `transient` ones are retried within the deadline. */
export class RemoteError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
    this.name = 'RemoteError';
  }
}

// The SDK throws plain Errors that carry the HTTP status in their text ("… Status: 503 …").
const RETRYABLE_STATUS = /\bStatus: (408|409|429|5\d\d)\b/;
// JSON-RPC internal error: what a mesh gateway answers while it is not ready (`unavailable`).
const INTERNAL_ERROR = -32603;

/**
 * Classifies what an A2A call threw (STYLE: one place decides what is retried): the network
 * (the remote mesh not started yet, a dropped connection), 408/409/429/5xx and JSON-RPC internal
 * errors are transient; anything else the remote said (bad input, unknown task, 401/403) is final.
 */
export function toRemoteError(e: unknown): RemoteError {
  if (e instanceof RemoteError) return e;
  const message = e instanceof Error ? e.message : String(e);
  const code = (e as { code?: unknown } | null)?.code;
  const transient =
    e instanceof TypeError || // fetch: connection refused, reset, DNS
    (e instanceof Error && e.name === 'TimeoutError') ||
    RETRYABLE_STATUS.test(message) ||
    code === INTERNAL_ERROR;
  return new RemoteError(message.slice(0, 2000), transient);
}
