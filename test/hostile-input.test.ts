// Hostile input against a whole mesh (docs/reference/bounds.md): requests from clients, the token
// counts and replies of a model, the results of tools. Nothing gets a 5xx, stalls a process or wedges
// an invocation, and nothing unbounded is stored. Each former file's tests are one heading subtest
// below, starting and stopping their own meshes, their helpers inside it.
import net from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ERROR_CODES, keyLayout, MAX_CALL_TOKENS } from '@agentmesh/shared';
import fc from 'fast-check';
import t from 'tap';
import {
  type FakeReply,
  type FakeScript,
  type SeenRequest,
  toolMessagesOf,
  turnOf,
} from './support/fake-model.js';
import { startMesh } from './support/mesh.js';
import { failureSummary } from './support/property-report.js';

// ---------------------------------------------------------------------------------------------------
// Property: no request — hostile bodies, headers, query strings, paths, methods, raw bytes —
// gets a 5xx from the gateway, every error answer has the contract's shape, and the gateway is
// healthy after (docs/reference/rest-api.md, docs/reference/bounds.md). Requests go over real TCP, so Node's own parser is in play.
t.test(
  "hostile requests: no 5xx, every error answer in the contract's shape, the gateway healthy after",
  async (t) => {
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
      fc.constantFrom(
        '%',
        '%zz',
        '%00',
        '%E0%A4%A',
        '..',
        '../..',
        '%2e%2e%2f',
        '//',
        '\\',
        '?',
        '#',
        ' ',
        '',
      ),
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
      fc.constantFrom(
        deep(5000),
        `{"prompt": ${deep(10_000)}}`,
        `{"prompt": "${'x'.repeat(2 * 1024 * 1024)}"}`,
      ),
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
          .map(([m, p]) =>
            Buffer.from(`${m} /${p} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`, 'utf8'),
          ),
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
  },
);

// ---------------------------------------------------------------------------------------------------
// A model's `usage` is hostile input like the rest of its reply (issue 24, items 3 and 4): huge,
// negative, fractional, infinite, missing, strings or only `total_tokens`. Token counts reach Redis
// as integers in [0, MAX_CALL_TOKENS], so no Lua step refuses them and no invocation is wedged;
// negatives count 0, `total_tokens` stands in for missing parts, and under a budget a reply that
// reports nothing is charged an estimate, so `?budget` / `maxTokens` cannot be bypassed.
t.test("a model's hostile usage: every invocation ends, counts stay bounded, budgets hold", async (t) => {
  /** A Chat Completions body whose `usage` is the raw JSON text `usage` (absent when undefined). */
  const body = (message: object, usage: string | undefined) =>
    `{"id":"chatcmpl-u","object":"chat.completion","model":"fake","choices":[{"index":0,"message":${JSON.stringify(
      message,
    )},"finish_reason":"stop"}]${usage === undefined ? '' : `,"usage":${usage}`}}`;
  const echoCall = {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'echo', arguments: '{"prompt":"x"}' } }],
  };
  const answer = { role: 'assistant', content: 'done' };

  // Each case's replies, by the case number in its prompt: [turn 0 (a tool call), turn 1 (final)].
  const cases = new Map<string, [string | undefined, string | undefined]>();
  const caseOf = (r: SeenRequest) =>
    /case-(\d+)/.exec(r.messages.find((m) => m.role === 'user')?.content ?? '')?.[1] ?? '';

  const mesh = await startMesh(t, {
    tools: [
      {
        name: 'echo',
        description: 'Echoes.',
        input: { type: 'object', properties: { prompt: { type: 'string' } } },
        run: () => 'echoed',
      },
    ],
    agentsYaml: `
  capped: {instructions: "@agent capped", tools: [echo], maxTokens: 100, maxIterations: 3}
  free: {instructions: "@agent free", tools: [echo], maxIterations: 3}
`,
    script: (r): FakeReply => {
      const usage = cases.get(caseOf(r)) ?? [undefined, undefined];
      return turnOf(r) === 0 ? { raw: body(echoCall, usage[0]) } : { raw: body(answer, usage[1]) };
    },
  });

  let n = 0;
  /** Invokes `agent` with replies carrying these usages; answers its terminal view. */
  async function run(agent: string, usages: [string | undefined, string | undefined], query = '') {
    const id = String(n++);
    cases.set(id, usages);
    const res = await mesh.invoke(agent, { prompt: `case-${id}` }, `wait=60${query}`);
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${JSON.stringify(res.json)}`);
    return res.json;
  }

  t.test('a usage of ±1e308 or 1e999 ends the invocation instead of wedging it', async (t) => {
    for (const [huge, tokens] of [
      ['1e308', MAX_CALL_TOKENS],
      ['1e999', MAX_CALL_TOKENS],
      ['-1e308', 0],
    ] as const) {
      const usage = `{"prompt_tokens": ${huge}, "completion_tokens": ${huge}}`;
      const free = await run('free', [usage, usage]);
      t.equal(free.status, 'succeeded', `${huge} without a budget`);
      t.strictSame(
        free.usage,
        { modelCalls: 2, promptTokens: 2 * tokens, completionTokens: 2 * tokens },
        `${huge} counted as ${tokens} per count`,
      );
      const capped = await run('capped', [usage, usage]);
      t.not(capped.status, 'running', `${huge} under maxTokens ends`);
    }
  });

  t.test('negative counts count nothing, so they cannot pay for a budget', async (t) => {
    const view = await run('capped', [
      '{"prompt_tokens": -1000, "completion_tokens": 1000}',
      '{"prompt_tokens": -1000, "completion_tokens": 1000}',
    ]);
    t.equal(view.status, 'failed');
    t.equal(view.error.code, 'budget_exceeded');
    t.strictSame(view.usage, { modelCalls: 1, promptTokens: 0, completionTokens: 1000 });
  });

  t.test('total_tokens stands in for missing parts', async (t) => {
    const alone = await run('free', ['{"total_tokens": 500}', '{"total_tokens": 500}']);
    t.strictSame(alone.usage, { modelCalls: 2, promptTokens: 1000, completionTokens: 0 });
    const beside = await run('free', [
      '{"prompt_tokens": 30, "total_tokens": 100}',
      '{"completion_tokens": 30, "total_tokens": 100}',
    ]);
    t.strictSame(beside.usage, { modelCalls: 2, promptTokens: 100, completionTokens: 100 });
    const capped = await run('capped', ['{"total_tokens": 500}', '{"total_tokens": 500}']);
    t.equal(capped.error?.code, 'budget_exceeded', 'and trips the budget');
  });

  t.test('under a budget, a reply without usable counts is charged an estimate', async (t) => {
    for (const usage of [undefined, '{}', 'null', '{"prompt_tokens": "5000", "completion_tokens": "5"}']) {
      const view = await run('free', [usage, usage], '&budget=1');
      t.equal(view.status, 'failed', `usage ${usage}`);
      t.equal(view.error.code, 'budget_exceeded', `usage ${usage}`);
      t.equal(view.usage.modelCalls, 1, 'the second model call never started');
      t.ok(view.usage.promptTokens >= 1 && view.usage.completionTokens >= 1, 'estimated from the bytes');
      const record = (await mesh.get(`/invocations/${view.id}`)).json;
      t.equal(record.status, 'failed');
    }
    const unbudgeted = await run('free', [undefined, undefined]);
    t.equal(unbudgeted.status, 'succeeded');
    t.strictSame(
      unbudgeted.usage,
      { modelCalls: 2, promptTokens: 0, completionTokens: 0 },
      'no budget, no estimate',
    );
  });

  /** A number as raw JSON text as a model might send it, or something that is no number. */
  const hostileCount = fc.oneof(
    fc.integer().map(String),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
    fc.constantFrom('1e308', '-1e308', '1e999', '-1e999', '9007199254740993', '1e-400', '-0', '0.5', '0'),
    fc.constantFrom('"5000"', 'null', 'true', '{}', '[]', '"1e308"'),
  );
  const hostileUsage = fc.oneof(
    fc.constant(undefined),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc
      .record(
        { prompt_tokens: hostileCount, completion_tokens: hostileCount, total_tokens: hostileCount },
        { requiredKeys: [] },
      )
      .map(
        (u) =>
          `{${Object.entries(u)
            .map(([k, v]) => `"${k}":${v}`)
            .join(',')}}`,
      ),
  );

  t.test('whatever usage a model reports, every invocation ends and no budgeted call is free', async (t) => {
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
    const report = await fc.check(
      fc.asyncProperty(
        hostileUsage,
        hostileUsage,
        fc.constantFrom('free', 'capped'),
        async (u0, u1, agent) => {
          const view = await run(agent, [u0, u1]);
          if (!['succeeded', 'failed'].includes(view.status)) throw new Error(`ended ${view.status}`);
          if (view.status === 'failed' && view.error.code !== 'budget_exceeded')
            throw new Error(`failed with ${view.error.code}: ${view.error.message}`);
          const { modelCalls, promptTokens, completionTokens } = view.usage;
          for (const count of [promptTokens, completionTokens]) {
            if (!Number.isSafeInteger(count) || count < 0 || count > modelCalls * MAX_CALL_TOKENS)
              throw new Error(`usage ${JSON.stringify(view.usage)} out of bounds`);
          }
          if (agent === 'capped' && promptTokens + completionTokens < modelCalls)
            throw new Error(`a budgeted call counted nothing: ${JSON.stringify(view.usage)}`);
        },
      ),
      { numRuns: Number(process.env.FC_RUNS ?? 60), seed, endOnFailure: true },
    );
    t.notOk(report.failed, failureSummary(report));
  });
});

// ---------------------------------------------------------------------------------------------------
// A hostile model against a whole mesh (docs/reference/bounds.md, issue 7 defects 2, 5 and 8): no reply stalls
// the runner's event loop (runners run in this process), an oversized reply fails the call and is
// not stored, calls past the per-reply cap fail as tool messages, invented names stay out of
// metric labels.
t.test(
  'hostile model replies: no stall, no oversized reply stored, calls capped, no invented labels',
  async (t) => {
    t.test(
      'the fenced-newlines answer of issue 7 does not stall the runner, and the retry succeeds',
      async (t) => {
        const mesh = await startMesh(t, {
          agentsYaml: `
  typed:
    instructions: "@agent typed"
    output: {type: object, properties: {ok: {type: boolean}}, required: [ok]}
`,
          script: (r) =>
            turnOf(r) === 0 ? { final: `\`\`\`\n${'\n'.repeat(3000)}x` } : { final: '{"ok": true}' },
        });
        const delay = monitorEventLoopDelay({ resolution: 10 });
        delay.enable();
        const res = await mesh.invoke('typed', { prompt: 'go' });
        delay.disable();
        t.match(res.json, { status: 'succeeded', output: { ok: true } });
        // A generous bound, far from the ~8 s the backtracking regex blocked for.
        t.ok(
          delay.max < 1e9,
          `the event loop never stalled for a second (max ${Math.round(delay.max / 1e6)} ms)`,
        );
        const requests = mesh.model.of('typed');
        t.equal(requests.length, 2, 'one model call per answer: no lock lapse sent one twice');
        t.match(requests[1]!.messages.at(-1), {
          role: 'user',
          content: /^The final response is not valid JSON \(/,
        });
      },
    );

    t.test(
      'a 5 MiB model reply fails the invocation with invalid_model_reply and is not stored',
      async (t) => {
        const huge = 'x'.repeat(5 * 1024 * 1024);
        const mesh = await startMesh(t, {
          agentsYaml: `
  solo: {instructions: "@agent solo"}
`,
          script: () => ({ final: huge }),
        });
        const res = await mesh.invoke('solo', { prompt: 'go' });
        t.match(res.json, {
          status: 'failed',
          error: { code: 'invalid_model_reply', message: 'The model reply exceeds 4194304 bytes.' },
        });
        t.equal(mesh.model.requests.length, 1, 'not retried: the same prompt would bring the same reply');
        const keys = keyLayout(mesh.prefix);
        const stored = await mesh.client.hgetall(keys.calls(res.json.id, res.json.id));
        t.ok(JSON.stringify(stored).length < 10_000, 'no part of the reply body is in Redis');
      },
    );

    t.test(
      'a reply with 2000 tool calls runs 64 of them; the rest come back as too_many_calls',
      async (t) => {
        let runs = 0;
        const mesh = await startMesh(t, {
          tools: [
            {
              name: 'clock',
              description: 'Time.',
              input: { type: 'object', properties: {} },
              run: () => {
                runs++;
                return 'noon';
              },
            },
          ],
          agentsYaml: `
  boss: {instructions: "@agent boss", tools: [clock]}
`,
          script: (r) =>
            turnOf(r) === 0
              ? {
                  calls: Array.from({ length: 2000 }, (_, i) => ({
                    name: i < 2 ? `invented_${i}` : i % 50 === 49 ? '_subagent_ghost' : 'clock',
                  })),
                }
              : { final: 'done' },
        });
        const res = await mesh.invoke('boss', { prompt: 'go' });
        t.match(res.json, { status: 'succeeded', output: 'done' });
        t.equal(runs, 61, 'the tool ran for the declared calls among the first 64 only');
        const messages = toolMessagesOf(mesh.model.requests[1]!);
        t.equal(messages.length, 2000, 'every call is answered in the next request');
        t.strictSame(
          messages.slice(0, 3).map((m) => m.content),
          ['Tool invented_0 does not exist.', 'Tool invented_1 does not exist.', 'noon'],
        );
        t.equal(
          messages[49]!.content,
          'Sub-agent _subagent_ghost execute failed: Sub-agent ghost is not a declared sub-agent of boss.',
        );
        const capped = 'At most 64 calls are allowed in one model reply.';
        t.equal(messages[64]!.content, `Tool clock execute failed: ${capped}`);
        t.equal(messages[199]!.content, `Sub-agent _subagent_ghost execute failed: ${capped}`);
        t.equal(messages.filter((m) => m.content?.endsWith(capped)).length, 1936);
        const metrics = await mesh.runners[0]!.metrics.registry.metrics();
        t.match(metrics, /mesh_tool_calls_total\{agent="boss",tool="clock",outcome="succeeded"\} 61/);
        t.match(metrics, /mesh_tool_calls_total\{agent="boss",tool="unknown",outcome="failed"\} 2/);
        t.notMatch(metrics, /invented|ghost/, 'no invented name becomes a label');
      },
    );
  },
);

// ---------------------------------------------------------------------------------------------------
// What the tool-host keeps of a result is what the invocation keeps (issue 24, items 6 and 10): a
// 9 MB result was stored whole in its outcome record for 7 days. Now the outcome, like the answer,
// holds the tool message cut at MESH_MAX_RESULT_BYTES with its visible marker; a result too deep
// to be JSON is refused naming the tool, not "Sub-agent result".
t.test(
  'a tool result is kept as the invocation keeps it: cut at MESH_MAX_RESULT_BYTES, too deep refused',
  async (t) => {
    const keys = keyLayout('mesh');
    const nested = (depth: number) => {
      let v: unknown = 1;
      for (let i = 0; i < depth; i++) v = [v];
      return v;
    };

    const tool = (name: string, run: () => unknown) => ({
      name,
      description: `Returns ${name}.`,
      input: { type: 'object' },
      run,
    });

    // The agent calls the tool its prompt names, then answers with the tool message it got.
    const script: FakeScript = (r) => {
      if (turnOf(r) === 0) return { calls: [{ name: r.messages.at(-1)!.content!, args: {} }] };
      return { final: toolMessagesOf(r)[0]?.content ?? '' };
    };

    const mesh = await startMesh(t, {
      script,
      tools: [
        tool('huge_text', () => 'x'.repeat(9 * 1024 * 1024)),
        tool('huge_object', () => ({ rows: Array.from({ length: 200_000 }, (_, i) => ({ i, v: 'value' })) })),
        tool('small', () => ({ ok: true })),
        tool('deep', () => nested(3000)),
        tool('deeper', () => nested(20_000)),
      ],
      agentsYaml: `
  caller: {instructions: "@agent caller", tools: [huge_text, huge_object, small, deep, deeper]}
`,
    });

    /** Runs the tool named `name` through an invocation; the tool message and its outcome record's bytes. */
    async function call(name: string) {
      const view = (await mesh.invoke('caller', { prompt: name }, 'wait=60')).json;
      const callId = view.calls.find((c: any) => c.kind === 'tool').callId;
      const key = keys.toolOutcome(`${view.id}/${callId}`);
      return {
        message: view.output as string,
        outcomeBytes: await mesh.client.hstrlen(key, 'outcome'),
        memory: Number(await mesh.client.call('MEMORY', 'USAGE', key)),
      };
    }

    t.test('a 9 MB text result is kept as the invocation keeps it: 64 KiB with the marker', async (t) => {
      const { message, outcomeBytes, memory } = await call('huge_text');
      t.equal(Buffer.byteLength(message), 64 * 1024, 'the tool message is cut at MESH_MAX_RESULT_BYTES');
      t.match(message, /…\[truncated: 9437184 bytes total, showing the first \d+\]$/);
      t.ok(outcomeBytes < 70 * 1024, `the outcome record holds ${outcomeBytes} bytes`);
      t.ok(memory < 100 * 1024, `the outcome key takes ${memory} bytes of Redis`);
    });

    t.test('a large object result is cut as its compact JSON, the same text the model gets', async (t) => {
      const { message, outcomeBytes } = await call('huge_object');
      t.ok(message.startsWith('{"rows":[{"i":0,"v":"value"},'), 'its JSON text, cut');
      t.match(message, /…\[truncated: \d+ bytes total, showing the first \d+\]$/);
      // Kept as a JSON string: its quotes are escaped, the rest is the 64 KiB the invocation keeps.
      t.ok(outcomeBytes < 2 * 64 * 1024, `the outcome record holds ${outcomeBytes} bytes`);
    });

    t.test('a result that fits is answered and kept as it is', async (t) => {
      const { message, outcomeBytes } = await call('small');
      t.equal(message, '{"ok":true}');
      t.ok(outcomeBytes > 0 && outcomeBytes < 100);
    });

    t.test('a result too deeply nested is refused naming the tool, wherever it is found', async (t) => {
      // 3,000 levels pass JSON.stringify on the tool-host and overflow the runner's walk; 20,000 do not
      // even leave the tool-host.
      for (const name of ['deep', 'deeper']) {
        const { message } = await call(name);
        t.equal(
          message,
          `Tool ${name} execute failed: Tool ${name} result is cyclic or too deeply nested to normalize as JSON`,
        );
      }
    });
  },
);
