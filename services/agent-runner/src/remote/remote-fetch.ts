/** Bytes of one A2A response (a card, a task, a whole event stream) a runner reads at most. */
export const MAX_REMOTE_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * The `fetch` the A2A client of one remote agent uses: the configured headers on every request
 * (a header the client sets itself wins, e.g. `A2A-Version`), and a response body cut off with an
 * error past `maxBytes`, so a hostile remote cannot make a runner buffer without bound.
 */
export function remoteFetch(
  configured: Readonly<Record<string, string>>,
  maxBytes = MAX_REMOTE_RESPONSE_BYTES,
): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(configured)) if (!headers.has(name)) headers.set(name, value);
    const res = await fetch(input, { ...init, headers });
    if (!res.body) return res;
    let seen = 0;
    const cap = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes)
          controller.error(new Error(`the remote answer is larger than ${maxBytes} bytes`));
        else controller.enqueue(chunk);
      },
    });
    return new Response(res.body.pipeThrough(cap), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}
