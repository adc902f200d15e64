// The guard of the queue fast path (docs/architecture/queue-fast-path.md, "Upgrading BullMQ"): each
// BullMQ step it builds on is read from the installed package (node_modules/bullmq), and its
// highest KEYS and ARGV indexes and its answers are checked against what the fast path assumes —
// the arguments it appends start past the last one BullMQ reads, its own answers collide with
// none of BullMQ's, the answer it extends has the fields it counts on — and each private member
// of BullMQ's worker it wraps or calls still exists. A BullMQ upgrade that moves any of these fails
// here, before a mesh runs on it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Job, Worker } from 'bullmq';
import t from 'tap';
import { BULLMQ_VERSION } from '../src/queue/fast-path/bullmq-script.js';
import { fetchScripts } from '../src/queue/fast-path/fetch-scripts.js';
import { takeStepLua } from '../src/queue/fast-path/take-step.js';

const require = createRequire(import.meta.url);

/** BullMQ's step as the installed package ships it (its text, and how many keys it takes). */
function upstream(name: string, keys: number): string {
  const script = (
    require(`bullmq/dist/cjs/scripts/${name}-${keys}.js`) as Record<string, { content: string; keys: number }>
  )[name];
  if (!script) throw new Error(`bullmq ${BULLMQ_VERSION} ships no ${name}-${keys}`);
  if (script.keys !== keys) throw new Error(`${name}: ${script.keys} keys, not ${keys}`);
  return script.content;
}

/** The indexes a script reads of `table` (KEYS or ARGV); throws on any index that is not a literal. */
function indexes(lua: string, table: 'KEYS' | 'ARGV'): number[] {
  const found: number[] = [];
  for (const m of lua.matchAll(new RegExp(`(#?)\\b${table}\\b(\\[([^\\]]*)\\])?`, 'g'))) {
    if (m[1] === '#' || m[3] === undefined || !/^\d+$/.test(m[3].trim()))
      throw new Error(`${table} read other than at a literal index: "${m[0]}"`);
    found.push(Number(m[3]));
  }
  return found;
}

/** The literal numbers a script answers with (`return -2`, `return 1`). */
const numericAnswers = (lua: string) =>
  new Set([...lua.matchAll(/\breturn\s+(-?\d+)\b(?!\s*[*/+.-])/g)].map((m) => Number(m[1])));

/** The table literals a script answers with (`return {a, b}`), as their top-level fields. */
function tableAnswers(lua: string): string[][] {
  const out: string[][] = [];
  for (const m of lua.matchAll(/\breturn\s+\{/g)) {
    let depth = 0;
    let field = '';
    const fields: string[] = [];
    for (const ch of lua.slice(m.index + m[0].length - 1)) {
      if (ch === '{' || ch === '(') depth++;
      if (ch === '}' || ch === ')') depth--;
      if (depth === 0) break;
      if (depth === 1 && ch === ',') {
        fields.push(field.trim());
        field = '';
      } else if (!(depth === 1 && ch === '{')) field += ch;
    }
    if (field.trim() !== '') fields.push(field.trim());
    out.push(fields);
  }
  return out;
}

/**
 * Each step the fast path builds on: its keys, the highest ARGV BullMQ reads (the fast path's own
 * arguments start right after it), and where the fast path relies on that.
 */
const STEPS = [
  // The take: its settings are appended as the last argument (take-activation.ts): ARGV[4].
  { name: 'moveToActive', keys: 11, argv: 3 },
  // The completion that fetches the next job: the take's settings are its last argument, ARGV[10].
  { name: 'moveToFinished', keys: 14, argv: 9 },
  // The guarded add: ARGV[4] the parent's invocation, ARGV[5] its epoch (guarded-add.ts).
  { name: 'addStandardJob', keys: 9, argv: 3 },
  // The guarded park: ARGV[6] the parent's invocation, ARGV[7] its epoch (guarded-park.ts).
  { name: 'moveToWaitingChildren', keys: 7, argv: 5 },
  // The gone-runner reclaim: ARGV[5] the gone runner's name (gone-runner-steps.ts).
  { name: 'moveStalledJobsToWait', keys: 9, argv: 4 },
] as const;

t.test(`bullmq ${BULLMQ_VERSION}: each step reads the KEYS and ARGV the fast path leaves it`, async (t) => {
  for (const step of STEPS) {
    const lua = upstream(step.name, step.keys);
    t.equal(Math.max(...indexes(lua, 'KEYS')), step.keys, `${step.name}: its highest KEYS is its last key`);
    t.equal(
      Math.max(...indexes(lua, 'ARGV')),
      step.argv,
      `${step.name}: its highest ARGV is ${step.argv}; the fast path's own start at ${step.argv + 1}`,
    );
  }
});

t.test('the answers the fast path reads or adds to are as it assumes', async (t) => {
  const take = upstream('moveToActive', 11);
  const tables = tableAnswers(take);
  t.ok(tables.length > 0, 'the take answers with tables');
  t.same(
    tables.map((fields) => fields.length),
    tables.map(() => 4),
    'every answer of the take has four fields (job data, id, rate-limit delay, delay): the fifth is the activation (take-activation.ts)',
  );
  t.ok(
    take.includes('return {rcall("HGETALL", jobKey), jobId, 0, 0}'),
    'a job taken is answered as the fast path changes it',
  );
  t.ok(take.includes('return {0, 0, 0, 0}'), 'no job is four zeros');

  const add = upstream('addStandardJob', 9);
  t.notOk(numericAnswers(add).has(-9001), 'the guard refusal (-9001) is none of the add’s codes');

  const park = upstream('moveToWaitingChildren', 7);
  const parkCodes = numericAnswers(park);
  t.ok(
    parkCodes.has(0) && parkCodes.has(1),
    'the park answers 0 (waiting) or 1 (no child pending), as guarded-park.ts reads',
  );
  t.ok(
    [...parkCodes].every((c) => c === 0 || c === 1 || c < 0),
    'and negative codes otherwise (BullMQ’s errors)',
  );
  t.notOk(parkCodes.has(-9001), 'none of them the guard refusal (-9001)');

  const stalled = upstream('moveStalledJobsToWait', 9);
  t.ok(
    /\breturn\s+\{\}/.test(stalled),
    "the stalled check answers an empty table when it moves none, as the reclaim's prelude does",
  );
});

t.test('the changed steps build from this version (no changed line moved)', async (t) => {
  t.doesNotThrow(() => fetchScripts(), 'moveToActive and moveToFinished (fetch-scripts.ts)');
  t.doesNotThrow(() => takeStepLua(), 'the take (take-step.ts)');
});

t.test("the private members of BullMQ's classes the fast path wraps or calls exist", async (t) => {
  const worker = Worker.prototype as unknown as Record<string, unknown>;
  // fetch-scripts.ts, early-start.ts
  for (const member of ['updateDelays', 'nextJobFromJobData', 'waitForJob', 'moveToActive', 'processJob'])
    t.type(worker[member], 'function', `Worker#${member}`);
  // The fields they read, as the installed classes' text sets them.
  const text = (file: string) => readFileSync(require.resolve(`bullmq/dist/cjs/classes/${file}`), 'utf8');
  const fields: [file: string, field: string][] = [
    ['worker.js', 'mainLoopQueue'],
    ['worker.js', 'drained'],
    ['job.js', 'backend'],
  ];
  for (const [file, field] of fields)
    t.match(text(file), new RegExp(`this\\.${field}\\b`), `${file} keeps ${field}`);
  t.ok(
    text('worker.js').includes('this.mainLoopQueue = asyncFifoQueue'),
    "the main loop's queue is the worker's mainLoopQueue",
  );
  // guarded-park.ts: the job's backend builds the park's arguments and reads its errors.
  const backend = require('bullmq/dist/cjs/classes/redis-queue-backend.js') as Record<
    string,
    { prototype: Record<string, unknown> }
  >;
  const Backend = Object.values(backend).find(
    (c) => typeof c?.prototype?.moveToWaitingChildrenArgs === 'function',
  );
  t.ok(Backend, 'the backend builds moveToWaitingChildren arguments (moveToWaitingChildrenArgs)');
  t.type(Backend?.prototype.finishedErrors, 'function', 'and reads its errors (finishedErrors)');
  // guarded-add.ts: a job adds itself through a client that stands in for the pipeline.
  t.type((Job.prototype as unknown as Record<string, unknown>).addJob, 'function', 'Job#addJob');
});
