// A client generated from the live document works for every operation (issue 9): openapi-typescript
// turns /docs/json into types, a small openapi-fetch program calling every operation with natural
// types (`wait: 60`, typed bodies and outputs) passes `tsc --strict`, runs against the mesh, and
// every answer it got is valid against the document (ajv).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import t from 'tap';
import { openapiMesh } from './fixtures/openapi-client/openapi-mesh.js';
import { listen, startMesh } from './support/mesh.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
const bin = (p: string) => path.join(root, 'node_modules', p);
// ajv-formats is CommonJS with `exports.default` (as in packages/shared's compile-schema.ts).
type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as unknown as FormatsPlugin;

interface Answer {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: unknown;
}
type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
};

const mesh = await startMesh(t, openapiMesh);
const base = await listen(mesh);
const doc = (await (await fetch(`${base}/docs/json`)).json()) as Doc;

// The program's directory: the generated types, the program, and this repo's node_modules.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-client-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(doc));
fs.copyFileSync(
  path.join(import.meta.dirname, 'fixtures/openapi-client/program.ts.txt'),
  path.join(dir, 'program.ts'),
);

t.test('openapi-typescript generates types from the live document', async (t) => {
  await run(process.execPath, [bin('openapi-typescript/bin/cli.js'), 'openapi.json', '-o', 'schema.d.ts'], {
    cwd: dir,
  });
  const types = fs.readFileSync(path.join(dir, 'schema.d.ts'), 'utf8');
  t.match(types, /"\/agents\/quiz\/invoke": \{/, 'each agent has its own operation');
  t.match(types, /wait\?: number;/, 'wait is a number');
  t.match(types, /"Idempotency-Key"\?: string;/, 'Idempotency-Key is a typed header');
  t.match(types, /"application\/json": components\["schemas"\]\["InvocationView"\];/, 'bodies are typed');
});

t.test('the client program type-checks under tsc --strict', async (t) => {
  const args = [
    bin('typescript/bin/tsc'),
    '--strict',
    '--noEmit',
    '--target',
    'es2022',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--types',
    'node',
    '--lib',
    'es2023,dom',
    'program.ts',
  ];
  const out = await run(process.execPath, args, { cwd: dir }).catch((e: { stdout: string }) => e);
  t.equal(out.stdout, '', 'no type error');
});

t.test('the program calls every operation, and every answer is valid against the document', async (t) => {
  const out = await run(process.execPath, [bin('tsx/dist/cli.mjs'), 'program.ts', base], {
    cwd: dir,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((e: { stdout: string; stderr: string }) => {
    t.fail(`the program failed: ${e.stderr}`);
    return e;
  });
  const answers = out.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Answer);

  const operations = Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.keys(ops).map((m) => `${m} ${p}`),
  );
  const called = new Set(answers.map((a) => `${a.method} ${a.path}`));
  t.strictSame(
    operations.filter((o) => !called.has(o)),
    [],
    'every operation of the document was called',
  );

  const ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi.json');
  const pointer = (...parts: string[]) =>
    parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
  for (const a of answers) {
    const what = `${a.method} ${a.path} ${a.status}`;
    const declared = doc.paths[a.path]?.[a.method]?.responses[String(a.status)];
    if (!declared) {
      t.fail(`${what} is not declared`);
      continue;
    }
    const type = a.contentType.split(';')[0]!.trim();
    if (!declared.content?.[type]) {
      t.fail(`${what} answered ${type}, not declared`);
      continue;
    }
    const ref = `openapi.json#/${pointer('paths', a.path, a.method, 'responses', String(a.status), 'content', type, 'schema')}`;
    const validate = ajv.compile({ $ref: ref });
    // A text/event-stream is a sequence of events: each one's data is the declared schema.
    const bodies = type === 'text/event-stream' ? (a.body as unknown[]) : [a.body];
    for (const body of bodies) {
      t.ok(validate(body), `${what} (${type}) matches the document ${JSON.stringify(validate.errors ?? [])}`);
    }
  }
  t.ok(
    answers.some((a) => a.path === '/invocations/{id}/events' && (a.body as unknown[]).length > 5),
    'the stream carried the tree',
  );
});
