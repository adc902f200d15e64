// GET /invocations/{id}/calls/{callId} (docs/guides/console.md), through the gateway of a real mesh: what each
// call did, rebuilt from the durable records, equals what the model, the tool and the child saw.
import t from 'tap';
import { type SeenRequest, toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

const KEY = 'key-one';
const OTHER = 'key-two';
const BIG = 'x'.repeat(300 * 1024);

const userOf = (r: SeenRequest) => r.messages.find((m) => m.role === 'user')?.content;

const lookup = {
  name: 'lookup',
  description: 'Looks a word up.',
  input: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
  run: async (args: unknown) => {
    const { word } = args as { word: string };
    return { word, meaning: `the meaning of ${word}` };
  },
};

t.test('each call shows what it was asked and what it gave, to its owner only', async (t) => {
  const mesh = await startMesh(t, {
    tools: [lookup],
    apiKeys: `${KEY},${OTHER}`,
    headers: { authorization: `Bearer ${KEY}` },
    limits: { maxResultBytes: 1024 * 1024 },
    agentsYaml: `
  planner:
    instructions: "@agent planner"
    tools: [lookup]
    subagents: [helper]
  helper:
    description: Helps.
    instructions: "@agent helper"
`,
    script: (r) => {
      // A child's long answer (300 KiB) reaches the planner whole (results up to 1 MiB here).
      if (r.agent === 'helper') return { final: userOf(r) === 'big' ? BIG : 'helped with care' };
      if (turnOf(r) === 0) {
        return {
          content: 'Let me look.',
          calls: [
            { name: 'lookup', args: { word: 'mesh' } },
            { name: '_subagent_helper', args: { prompt: 'help me' } },
            { name: '_subagent_helper', args: { prompt: 'big' } },
          ],
        };
      }
      return { final: `done: ${toolMessagesOf(r).length} results` };
    },
  });
  const res = await mesh.invoke('planner', { prompt: 'define mesh' });
  t.equal(res.json.status, 'succeeded', JSON.stringify(res.json));
  const id: string = res.json.id;
  const call = async (callId: string, headers?: Record<string, string>) =>
    mesh.get(`/invocations/${id}/calls/${callId}`, headers);

  t.test('a model call: the messages the model received, and its reply with tokens', async (t) => {
    const planner = mesh.model.of('planner');
    for (const turn of [0, 1]) {
      const { status, json } = await call(`t${turn}-model`);
      t.equal(status, 200);
      t.match(json, {
        callId: `t${turn}-model`,
        kind: 'model',
        name: 'default',
        status: 'succeeded',
        attempt: 1,
      });
      t.ok(json.startedAt && json.finishedAt, 'with its timings');
      // The fake model got exactly these messages (the record-rebuilt conversation is the request),
      // but for the long tool result, which the answer cuts at 256 KiB.
      const seen = JSON.parse(JSON.stringify(planner[turn]!.messages)) as { content: string | null }[];
      for (const m of seen) if (m.content === BIG) m.content = BIG.slice(0, 256 * 1024);
      t.ok(turn === 0 || seen.some((m) => m.content?.length === 256 * 1024), 'the long result was sent');
      t.same(json.request.messages, seen, `turn ${turn}`);
      t.ok(Number.isInteger(json.usage.promptTokens) && Number.isInteger(json.usage.completionTokens));
    }
    const first = (await call('t0-model')).json;
    t.equal(first.result.content, 'Let me look.');
    t.same(
      first.result.toolCalls.map((c: { name: string; arguments: string }) => [
        c.name,
        JSON.parse(c.arguments),
      ]),
      [
        ['lookup', { word: 'mesh' }],
        ['_subagent_helper', { prompt: 'help me' }],
        ['_subagent_helper', { prompt: 'big' }],
      ],
    );
    t.equal((await call('t1-model')).json.result.content, 'done: 3 results');
  });

  t.test('a tool call: its arguments and its result', async (t) => {
    const { status, json } = await call('t0-call0');
    t.equal(status, 200);
    t.match(json, { kind: 'tool', name: 'lookup', status: 'succeeded', attempt: 1 });
    t.same(json.request, { arguments: { word: 'mesh' } });
    t.same(JSON.parse(json.result.content), { word: 'mesh', meaning: 'the meaning of mesh' });
    t.notOk(json.truncated, 'nothing was cut');
  });

  t.test("a delegation: the child's id, input and output", async (t) => {
    const { json } = await call('t0-call1');
    t.match(json, { kind: 'subagent', name: 'helper', status: 'succeeded' });
    t.same(json.request.arguments, { prompt: 'help me' });
    t.same(json.request.input, { prompt: 'help me' });
    t.equal(
      json.request.childId,
      res.json.calls.find((c: { callId: string }) => c.callId === 't0-call1').childId,
    );
    t.equal(json.result.output, 'helped with care');
    t.equal(json.result.content, 'helped with care', 'the tool message the planner saw');
  });

  t.test('a child invocation answers for its own calls', async (t) => {
    const childId = (await call('t0-call1')).json.request.childId;
    const { status, json } = await mesh.get(`/invocations/${childId}/calls/t0-model`);
    t.equal(status, 200);
    const asked = mesh.model.of('helper').find((r) => userOf(r) === 'help me')!;
    t.same(json.request.messages, JSON.parse(JSON.stringify(asked.messages)));
  });

  t.test('text past 256 KiB is cut there, with truncated: true', async (t) => {
    const { json } = await call('t0-call2');
    t.equal(json.truncated, true);
    t.equal(json.result.content, BIG.slice(0, 256 * 1024), 'the tool message the planner read');
    t.equal(json.result.output, BIG.slice(0, 256 * 1024), "the child's output");
    // The model call that follows received the whole result: only the answer is cut.
    const next = (await call('t1-model')).json;
    t.equal(next.truncated, true);
    const tool = next.request.messages.find((m: { tool_call_id?: string }) => m.tool_call_id === 't0-call2');
    t.equal(tool.content.length, 256 * 1024);
  });

  t.test('an unknown call is call_not_found, an unknown invocation invocation_not_found', async (t) => {
    const missing = await call('t9-call9');
    t.equal(missing.status, 404);
    t.equal(missing.json.error.code, 'call_not_found');
    const unknown = await mesh.get(`/invocations/inv_${'0'.repeat(32)}/calls/t0-model`);
    t.equal(unknown.status, 404);
    t.equal(unknown.json.error.code, 'invocation_not_found');
    const malformed = await mesh.get('/invocations/nope/calls/t0-model');
    t.equal(malformed.json.error.code, 'invocation_not_found');
  });

  t.test("another key's invocation is not found; no key is unauthorized", async (t) => {
    const other = await call('t0-call0', { authorization: `Bearer ${OTHER}` });
    t.equal(other.status, 404);
    t.equal(other.json.error.code, 'invocation_not_found');
    const none = await call('t0-call0', {});
    t.equal(none.status, 401);
    t.equal(none.json.error.code, 'unauthorized');
  });

  t.test('the route is in the OpenAPI document with its answer schema', async (t) => {
    const doc = (await mesh.get('/docs/json')).json;
    const op = doc.paths['/invocations/{id}/calls/{callId}'].get;
    t.equal(op.operationId, 'getCall');
    t.equal(op.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/CallDetail');
    t.ok(doc.components.schemas.CallDetail.properties.request, 'CallDetail is a named component');
    t.same(op.security, [{ bearerAuth: [] }]);
  });
});
