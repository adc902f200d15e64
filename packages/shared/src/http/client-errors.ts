import { type Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { MeshError } from '../errors/mesh-error.js';

/** A request URL longer than this answers 414 `url_too_long` (Node's own limit is all headers, 16 KiB). */
export const MAX_URL_BYTES = 8192;

/** The timeouts of a request's arrival: its headers, and the whole of it (headers and body). */
export interface ArrivalTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

/** The services' arrival timeouts unless told otherwise: headers 10 s, the whole request 30 s. */
export const DEFAULT_ARRIVAL: ArrivalTimeouts = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 };

/** How often Node looks for late headers and bodies (its default, 30 s, would let them linger). */
export const arrivalCheckMs = (t: ArrivalTimeouts): number =>
  Math.max(100, Math.min(1000, t.headersTimeoutMs / 2));

/**
 * Sets a server's arrival timeouts; Node checks both every `connectionsCheckingInterval` (give it
 * `arrivalCheckMs`), and answers a late request through `clientErrorHandler`.
 */
export function setArrivalTimeouts(server: Server, t: ArrivalTimeouts): void {
  server.requestTimeout = t.requestTimeoutMs;
  server.headersTimeout = Math.min(t.headersTimeoutMs, t.requestTimeoutMs); // never past requestTimeout
}

/** A whole HTTP/1.1 response in the error contract's shape, for a socket that has no request object. */
function rawAnswer(e: MeshError): string {
  const body = JSON.stringify(e.toBody());
  return (
    `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status] ?? 'Error'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `Connection: close\r\n\r\n${body}`
  );
}

/** The mesh error for what Node's HTTP parser refused, before any route saw the request. */
function parserError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }): MeshError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new MeshError('request_timeout', 'The request headers or body did not arrive in time.');
    case 'HPE_HEADER_OVERFLOW':
      return requestLineOverflows(err.rawPacket)
        ? new MeshError('url_too_long', `The request URL is longer than ${MAX_URL_BYTES} bytes.`)
        : new MeshError('headers_too_large');
    case 'HPE_INVALID_URL':
      return new MeshError('invalid_url');
    default:
      return new MeshError('invalid_input', 'The request is not valid HTTP/1.1.');
  }
}

/**
 * True when the bytes that overflowed Node's header limit are a request line without its end:
 * a method, a space, and no line break within the URL limit. Linear: one indexOf.
 */
function requestLineOverflows(raw: Buffer | undefined): boolean {
  if (!raw) return false;
  const head = raw.subarray(0, 16).toString('latin1');
  const end = raw.indexOf('\r\n');
  return /^[A-Z]{3,7} \//.test(head) && (end === -1 || end > MAX_URL_BYTES);
}

/**
 * fastify's `clientErrorHandler`: what Node's HTTP server refuses before fastify sees a request
 * (bad framing, header overflow, timeouts) answers in the error contract's shape, then closes.
 */
export function clientErrorHandler(err: Error, socket: Socket): void {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ECONNRESET' || socket.destroyed) return;
  // A response already under way (an event stream) cannot take a second status line.
  const busy = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (socket.writable && !busy) socket.write(rawAnswer(parserError(e)));
  socket.destroy();
}
