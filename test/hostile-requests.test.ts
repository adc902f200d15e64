// Property: no request — hostile bodies, headers, query strings, paths, methods, raw bytes —
// gets a 5xx from the gateway, every error answer has the contract's shape, and the gateway is
// healthy after (docs/reference/rest-api.md, docs/reference/bounds.md). Requests go over real TCP, so Node's own parser is in play.
import net from 'node:net';
import { ERROR_CODES } from '@agentmesh/shared';
import fc from 'fast-check';
import t from 'tap';
import { startMesh } from './support/mesh.js';
import { failureSummary } from './support/property-report.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends raw bytes, reads until the server closes (Connection: close), parses status and body.
 * `halfClose` ends the socket's writing side at once: garbage that is not a whole request then
 * closes instead of waiting out the header timeout (Node drops a half-closed connection whose
 * answer is not written yet, so whole requests keep the socket open).
 */
function rawRequest(port: number, bytes: Buffer, halfClose = false): Promise<RawAnswer | undefined> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer within 20 s'));
    }, 20_000);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      if (text === '') return resolve(undefined);
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      let body = rest.join('\r\n\r\n');
      if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    if (halfClose) socket.end(bytes);
    else socket.write(bytes);
  });
}

function unchunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    if (eol < 0) return out;
    const size = Number.parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 4 + size);
  }
}

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('%', '%zz', '%00', '%E0%A4%A', '..', '../..', '%2e%2e%2f', '//', '\\', '?', '#', ' ', ''),
  fc.constantFrom('9000000000000', '-1', '0', '1e309', '0x10', 'NaN', '1.5', '300', '301', '3e2', ' 1'),
  fc.integer().map(String),
  fc.nat(20_000).map((n) => 'a'.repeat(n)),
);

const segment = hostileString.map((s) => encodeURIComponentLoose(s));

/** Percent-encodes what an HTTP request line cannot carry, keeping deliberate `%` sequences. */
function encodeURIComponentLoose(s: string): string {
  return Array.from(s)
    .map((c) => (/[\x21-\x7e]/.test(c) && c !== '?' && c !== '#' ? c : encodeURIComponent(c)))
    .join('');
}

const path = fc.oneof(
  fc.constantFrom(
    '/agents/echo/invoke',
    '/agents/coder/invoke',
    '/agents',
    '/agents/echo',
    '/invocations',
    '/healthz',
    '/readyz',
    '/metrics',
    '/docs',
    '/docs/json',
    '/docs/static/../../package.json',
    '/docs/static/%2e%2e/%2e%2e/package.json',
    '/v1/models',
    '/v1/chat/completions',
  ),
  segment.map((s) => `/v1/models/${s}`),
  segment.map((s) => `/agents/${s}/invoke`),
  segment.map((s) => `/agents/${s}`),
  segment.map((s) => `/invocations/${s}`),
  segment.map((s) => `/invocations/${s}/events`),
  segment.map((s) => `/docs/static/${s}`),
  fc.array(segment, { maxLength: 6 }).map((p) => `/${p.join('/')}`),
);

const query = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom('wait', 'timeout', 'limit', 'cursor', 'agent', 'status'), segment),
      segment,
    ),
    { maxLength: 4 },
  )
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`));

const headerValue = fc.oneof(
  fc.string({ maxLength: 60 }).map((s) => s.replace(/[\r\n]/g, '')),
  fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-16', '*/*', ''),
  fc.nat(20_000).map((n) => 'k'.repeat(n)),
);

const headers = fc.array(
  fc.tuple(
    fc.constantFrom(
      'content-type',
      'idempotency-key',
      'last-event-id',
      'authorization',
      'expect',
      'accept',
      'content-encoding',
      'x-anything',
    ),
    headerValue,
  ),
  { maxLength: 5 },
);

// A chat completion (docs/guides/openai-compatible.md) of hostile messages, streamed or not.
const chat = fc
  .record({
    model: fc.oneof(fc.constantFrom('echo', 'coder'), hostileString),
    messages: fc.array(
      fc.record({
        role: fc.oneof(fc.constantFrom('user', 'assistant', 'system', 'tool'), hostileString),
        content: fc.oneof(
          hostileString,
          fc.jsonValue(),
          fc.array(fc.record({ type: fc.constantFrom('text', 'image_url'), text: hostileString })),
        ),
      }),
      { maxLength: 4 },
    ),
    stream: fc.oneof(fc.boolean(), fc.jsonValue()),
  })
  .map((v) => JSON.stringify(v));

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const body = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.record({ prompt: hostileString }).map((v) => JSON.stringify(v)),
  chat,
  fc.dictionary(hostileString, fc.jsonValue(), { maxKeys: 4 }).map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom(
    '',
    ' ',
    '{',
    'null',
    '{"__proto__": {"admin": true}}',
    '{"constructor": {"prototype": {}}}',
  ),
  fc.constantFrom(deep(5000), `{"prompt": ${deep(10_000)}}`, `{"prompt": "${'x'.repeat(2 * 1024 * 1024)}"}`),
);

const request = fc.record({
  method: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'HEAD', 'OPTIONS'),
  path,
  query,
  headers,
  body,
});

type HostileRequest = typeof request extends fc.Arbitrary<infer R> ? R : never;

function toBytes(r: HostileRequest): Buffer {
  const payload = r.body === undefined ? undefined : Buffer.from(r.body, 'utf8');
  const lines = [`${r.method} ${r.path}${r.query} HTTP/1.1`, 'host: localhost', 'connection: close'];
  const names = new Set(r.headers.map(([n]) => n));
  for (const [n, v] of r.headers) lines.push(`${n}: ${v}`);
  if (payload && !names.has('content-type')) lines.push('content-type: application/json');
  if (payload) lines.push(`content-length: ${payload.length}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8');
  return payload ? Buffer.concat([head, payload]) : head;
}

/** What every answer must be: no 5xx, and an error in the contract's shape with a registered code. */
function checkAnswer(a: RawAnswer | undefined, method: string): void {
  if (a === undefined) throw new Error('the connection closed without an answer');
  if (a.status >= 500) throw new Error(`HTTP ${a.status}: ${a.body.slice(0, 300)}`);
  if (a.status < 400 || method === 'HEAD') return;
  let parsed: { error?: { code?: unknown; message?: unknown } };
  try {
    parsed = JSON.parse(a.body);
  } catch {
    throw new Error(`HTTP ${a.status} with a body that is not JSON: ${a.body.slice(0, 300)}`);
  }
  const code = parsed.error?.code;
  if (typeof code !== 'string' || !(code in ERROR_CODES) || typeof parsed.error?.message !== 'string')
    throw new Error(`HTTP ${a.status} outside the error shape: ${a.body.slice(0, 300)}`);
  if (ERROR_CODES[code as keyof typeof ERROR_CODES].status !== a.status)
    throw new Error(`HTTP ${a.status} with code ${code}, whose status is another`);
}

t.test('no hostile request gets a 5xx or an answer outside the error contract', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: `
  echo: {instructions: "@agent echo"}
  coder: {module: '${new URL('./fixtures/no-input-code-agent.mjs', import.meta.url).pathname}'}
`,
    script: () => ({ final: 'ok' }),
  });
  await mesh.gateway.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (mesh.gateway.app.server.address() as net.AddressInfo).port;
  const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
  const report = await fc.check(
    fc.asyncProperty(request, async (r) => checkAnswer(await rawRequest(port, toBytes(r)), r.method)),
    { numRuns: Number(process.env.FC_RUNS ?? 400), seed, endOnFailure: true },
  );
  t.notOk(report.failed, failureSummary(report));
  const raw = await rawRequest(
    port,
    Buffer.from('GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'),
  );
  t.equal(raw?.status, 200, 'the gateway is healthy after');
  const ok = await mesh.invoke('echo', { prompt: 'still there?' });
  t.equal(ok.json.status, 'succeeded', 'and still runs invocations');
  const list = await mesh.get('/invocations?limit=100');
  t.equal(list.status, 200, 'the list of what hostile requests created still reads');
});

t.test('raw garbage on the socket is answered in the error shape or closed, never a 5xx', async (t) => {
  const mesh = await startMesh(t, { agentsYaml: '  echo: {instructions: "@agent echo"}\n' });
  await mesh.gateway.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (mesh.gateway.app.server.address() as net.AddressInfo).port;
  const garbage = fc.oneof(
    fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
    fc
      .tuple(fc.constantFrom('GET', 'POST', 'G\0T'), fc.string({ unit: 'binary', maxLength: 100 }))
      .map(([m, p]) => Buffer.from(`${m} /${p} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`, 'utf8')),
    fc
      .nat({ max: 100_000 })
      .map((n) => Buffer.from(`GET /agents/${'a'.repeat(n)} HTTP/1.1\r\nhost: x\r\n\r\n`)),
  );
  const report = await fc.check(
    fc.asyncProperty(garbage, async (bytes) => {
      const a = await rawRequest(port, bytes, true);
      // Node may close a connection that is not HTTP at all; when it answers, the answer follows the contract.
      if (a !== undefined && Number.isFinite(a.status)) checkAnswer(a, 'GET');
    }),
    { numRuns: Number(process.env.FC_RUNS ?? 200), endOnFailure: true },
  );
  t.notOk(report.failed, failureSummary(report));
  const health = await mesh.get('/healthz');
  t.equal(health.status, 200);
});
