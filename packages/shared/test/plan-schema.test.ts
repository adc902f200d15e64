/*
 * Port of upstream SubagentSetupTest and its Python mirror test_subagent.py.
 * Not applicable to TypeScript:
 * - nullDescriptorIsRejectedAtConstruction, mismatchedDescriptorClazzIsRejectedAtConstruction: Java
 *   resource descriptors; an agent here is a config entry, not a class rebuilt from a descriptor.
 * - Python "register as AGENT", "a duplicate AGENT name raises", "several AGENT resources coexist":
 *   there is no resource registry; agents are the keys of one `agents:` mapping.
 * - Python "a non-BaseModel input type is not supported": the analogue is a declaration that is neither
 *   a TypeBox type, a mapping nor a JSON string, tested below.
 * - theDeclaredTypesStayOutOfThePlanJson, theMetadataSerializesUnderTheCrossLanguageKeys and "a derived
 *   schema is carried in the plan JSON" live in plan-json.test.ts.
 */
import { Type } from '@sinclair/typebox';
import t from 'tap';
import { parse } from 'yaml';
import type { AgentConfig } from '../src/config/types.js';
import { isMeshError } from '../src/errors/mesh-error.js';
import { DEFAULT_INPUT_SCHEMA } from '../src/plan/default-input-schema.js';
import { deriveInputSchema } from '../src/plan/derive-input-schema.js';
import { deriveSchema } from '../src/plan/derive-schema.js';
import { effectiveInputSchema, effectiveOutputSchema } from '../src/plan/effective-schema.js';
import { explicitInputSchema } from '../src/plan/explicit-input-schema.js';
import { explicitSchema } from '../src/plan/explicit-schema.js';

const customSchema = '{"type":"object","properties":{"path":{"type":"string"}}}';
const Review = Type.Object({
  path: Type.String(),
  lines: Type.Integer({ default: 0 }),
  payload: Type.Uint8Array(),
});
const code: AgentConfig = { module: './agents/x.ts', tools: [], subagents: [] };
const react: AgentConfig = { model: 'default', tools: [], subagents: [] };

/** The message of the invalid_config error `fn` throws. */
function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isMeshError(e, 'invalid_config')) return e.message;
    throw e;
  }
  throw new Error('expected an invalid_config error');
}

const unrenderable = (type: string, reason: string) =>
  `Sub-agent input type ${type} cannot be rendered as a JSON Schema. Declare an input schema explicitly, ` +
  'or use an input type whose fields are all JSON-Schema-renderable. Rendering it reported: ' +
  reason;

t.test('a code agent that declares nothing states no shape for its arguments', async (t) => {
  t.equal(effectiveInputSchema(code, {}), null);
  t.equal(effectiveInputSchema(code), null);
  t.equal(effectiveOutputSchema(code, {}), null);
});

t.test('a description alone still states no input shape', async (t) => {
  t.equal(effectiveInputSchema({ ...code, description: 'Reviews a file.' }, {}), null);
});

t.test('a blank input schema is rejected at construction', async (t) => {
  for (const blank of ['', ' ', '\n\t ']) {
    t.equal(
      configError(() => explicitInputSchema(blank)),
      'Sub-agent input schema must not be blank.',
    );
  }
  t.equal(
    configError(() => effectiveInputSchema(code, { inputSchema: ' ' })),
    'Sub-agent input schema must not be blank.',
  );
});

t.test('an input schema that is not JSON, or has trailing tokens, is rejected', async (t) => {
  for (const text of ['{"type":"object"', '{"type":"object"} x', 'type: object', '{"type":"object"}{}']) {
    t.equal(
      configError(() => explicitInputSchema(text)),
      'Sub-agent input schema must be valid JSON.',
      text,
    );
  }
  const cyclic: Record<string, unknown> = { type: 'object' };
  cyclic.properties = { self: cyclic };
  t.equal(
    configError(() => explicitInputSchema(cyclic)),
    'Sub-agent input schema must be valid JSON.',
  );
});

t.test('an input schema that does not describe a JSON object is rejected', async (t) => {
  for (const value of [
    '{"type":"string"}',
    '[]',
    '"object"',
    '42',
    '{}',
    { type: 'array' },
    [],
    42,
    new Date(),
  ]) {
    t.equal(
      configError(() => explicitInputSchema(value)),
      'Sub-agent input schema must describe a JSON object.',
      JSON.stringify(value),
    );
  }
});

t.test('an absent input schema is left to the input type', async (t) => {
  const derived = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
  const input = Type.Object({ path: Type.String() });
  t.strictSame(effectiveInputSchema(code, { input }), derived);
  t.strictSame(effectiveInputSchema(code, { inputSchema: undefined, input }), derived);
  t.strictSame(effectiveInputSchema(code, { inputSchema: null, input }), derived);
});

t.test('an input type is rendered as the input schema', async (t) => {
  t.equal(
    JSON.stringify(deriveInputSchema(Review)),
    '{"type":"object","properties":{"path":{"type":"string"},"lines":{"type":"integer","default":0},' +
      '"payload":{"type":"string","format":"binary"}},"required":["path","payload"]}',
  );
});

t.test('TypeBox-private keys and symbols are dropped from a derived schema', async (t) => {
  const type = Type.Object(
    { name: Type.Optional(Type.String({ $id: 'Name', description: 'Who.', maxLength: 9 })) },
    { $id: 'Person', title: 'Person', additionalProperties: false },
  );
  const schema = deriveSchema(type);
  t.equal(
    JSON.stringify(schema),
    '{"type":"object","title":"Person","properties":{"name":{"type":"string","description":"Who.","maxLength":9}},"additionalProperties":false}',
  );
  t.strictSame(Object.getOwnPropertySymbols(schema), []);
});

t.test('an explicit input schema wins over the input type', async (t) => {
  const input = Type.Object({ other: Type.Number() });
  t.equal(JSON.stringify(effectiveInputSchema(code, { inputSchema: customSchema, input })), customSchema);
  t.equal(JSON.stringify(effectiveInputSchema(code, { input: JSON.parse(customSchema) })), customSchema);
  t.equal(JSON.stringify(effectiveInputSchema({ ...code, input: customSchema }, { input })), customSchema);
});

t.test('an input type that renders as no object states no schema', async (t) => {
  t.equal(deriveInputSchema(Type.String()), null);
  t.equal(deriveInputSchema(Type.Array(Type.String())), null);
  t.equal(effectiveInputSchema(code, { input: Type.String() }), null);
  t.strictSame(deriveSchema(Type.String()), { type: 'string' });
});

t.test('a self-referential input type is rejected', async (t) => {
  const Module = Type.Module({ Node: Type.Object({ next: Type.Optional(Type.Ref('Node')) }) });
  const cyclic: Record<string, unknown> = { type: 'object', properties: {} };
  (cyclic.properties as Record<string, unknown>).self = cyclic;
  let deep: ReturnType<typeof Type.String> | ReturnType<typeof Type.Array> = Type.String();
  for (let i = 0; i < 50_000; i++) deep = Type.Array(deep);
  const types = {
    recursive: Type.Recursive((This) => Type.Object({ next: Type.Optional(This) })),
    ref: Type.Object({ other: Type.Ref('Elsewhere') }),
    module: Module.Import('Node'),
    graph: cyclic,
    overflow: deep,
  };
  for (const [name, type] of Object.entries(types)) {
    t.match(
      configError(() => deriveSchema(type as never)),
      'is self-referential',
      name,
    );
  }
  t.equal(
    configError(() =>
      deriveSchema(Type.Recursive((This) => Type.Object({ next: Type.Optional(This) }), { $id: 'Chain' })),
    ),
    'Sub-agent input type Chain (Object {next}) is self-referential, so it cannot be rendered as a JSON Schema ' +
      '(#/properties/next refers back to "Chain"). Declare an input schema explicitly, or use an input type without recursion.',
  );
});

t.test('a type used twice in one object is not mistaken for a self-reference', async (t) => {
  const Path = Type.String();
  t.strictSame(deriveSchema(Type.Object({ from: Path, to: Path })), {
    type: 'object',
    properties: { from: { type: 'string' }, to: { type: 'string' } },
    required: ['from', 'to'],
  });
});

t.test('a type with a field JSON Schema cannot express is rejected with the remedy', async (t) => {
  t.equal(
    configError(() =>
      deriveSchema(Type.Object({ path: Type.String(), run: Type.Function([], Type.Void()) })),
    ),
    unrenderable('Object {path, run}', 'Function at #/properties/run has no JSON Schema form'),
  );
  const kinds = {
    Constructor: Type.Constructor([], Type.Object({})),
    Promise: Type.Promise(Type.String()),
    Symbol: Type.Symbol(),
    BigInt: Type.BigInt(),
    Date: Type.Date(),
    Undefined: Type.Undefined(),
    Void: Type.Void(),
    RegExp: Type.RegExp(/a/),
  };
  for (const [kind, field] of Object.entries(kinds)) {
    t.equal(
      configError(() => deriveSchema(Type.Object({ items: Type.Array(Type.Object({ x: field })) }))),
      unrenderable(
        'Object {items}',
        `${kind} at #/properties/items/items/properties/x has no JSON Schema form`,
      ),
      kind,
    );
  }
});

t.test('TypeBox containers render as the JSON Schema they already are', async (t) => {
  const type = Type.Object(
    {
      mode: Type.Union([Type.Literal('fast'), Type.Literal('slow')]),
      pair: Type.Tuple([Type.String(), Type.Number()]),
      tags: Type.Record(Type.String(), Type.Boolean()),
      any: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: false },
  );
  t.strictSame(deriveSchema(type), {
    type: 'object',
    properties: {
      mode: {
        anyOf: [
          { type: 'string', const: 'fast' },
          { type: 'string', const: 'slow' },
        ],
      },
      pair: {
        type: 'array',
        items: [{ type: 'string' }, { type: 'number' }],
        additionalItems: false,
        maxItems: 2,
        minItems: 2,
      },
      tags: { type: 'object', patternProperties: { '^(.*)$': { type: 'boolean' } } },
      any: {},
    },
    required: ['mode', 'pair', 'tags'],
    additionalProperties: false,
  });
});

t.test('a ReAct agent without a declared input takes the default prompt schema', async (t) => {
  const expected =
    '{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"],"additionalProperties":false}';
  t.equal(JSON.stringify(DEFAULT_INPUT_SCHEMA), expected);
  t.equal(JSON.stringify(effectiveInputSchema(react)), expected);
  t.equal(JSON.stringify(effectiveInputSchema({ ...react, input: customSchema })), customSchema);
  t.strictSame(effectiveInputSchema({ ...react, input: Review }), deriveSchema(Review));
});

t.test('an output schema may be any JSON Schema object, explicit or derived', async (t) => {
  t.strictSame(effectiveOutputSchema({ ...react, output: '{"type":"string"}' }), { type: 'string' });
  t.strictSame(effectiveOutputSchema({ ...react, output: Type.Array(Type.String()) }), {
    type: 'array',
    items: { type: 'string' },
  });
  t.strictSame(effectiveOutputSchema({ ...code }, { output: Type.Object({ ok: Type.Boolean() }) }), {
    type: 'object',
    properties: { ok: { type: 'boolean' } },
    required: ['ok'],
  });
  t.equal(effectiveOutputSchema(react), null);
  t.equal(
    configError(() => explicitSchema(' ')),
    'Sub-agent output schema must not be blank.',
  );
  t.equal(
    configError(() => explicitSchema('{')),
    'Sub-agent output schema must be valid JSON.',
  );
  t.equal(
    configError(() => explicitSchema('[1]')),
    'Sub-agent output schema must be a JSON Schema object.',
  );
  t.match(
    configError(() => effectiveOutputSchema({ ...react, output: Type.Date() })),
    /^Sub-agent output type Date cannot be rendered as a JSON Schema\. Declare an output schema explicitly/,
  );
});

t.test('the same declaration in YAML and in TypeBox yields byte-identical schemas', async (t) => {
  const yaml = `
input:
  type: object
  title: Review
  properties:
    path: {type: string, description: File to review.}
    lines: {type: integer, default: 0, minimum: 0}
    payload: {type: string, format: binary}
    tags:
      type: array
      items: {type: string}
      maxItems: 5
    mode:
      anyOf:
        - {type: string, const: fast}
        - {type: string, const: slow}
  required: [path, payload, tags]
  additionalProperties: false
`;
  const typebox = Type.Object(
    {
      path: Type.String({ description: 'File to review.' }),
      lines: Type.Integer({ minimum: 0, default: 0 }),
      payload: Type.Uint8Array(),
      tags: Type.Array(Type.String(), { maxItems: 5 }),
      mode: Type.Optional(Type.Union([Type.Literal('fast'), Type.Literal('slow')])),
    },
    { title: 'Review', additionalProperties: false, $id: 'Review' },
  );
  const fromYaml = effectiveInputSchema({ ...react, input: parse(yaml).input });
  const fromTypeBox = effectiveInputSchema({ ...react, input: typebox });
  t.equal(JSON.stringify(fromTypeBox), JSON.stringify(fromYaml));
  t.equal(
    JSON.stringify(fromTypeBox),
    JSON.stringify(explicitInputSchema(JSON.stringify(parse(yaml).input))),
  );
});
