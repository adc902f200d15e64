// fastify's request lines get their trace ids through a subclass of its LogController, the extension
// point its docs give for them, never by rewriting the controller's methods in place (issue 30:
// no patching of a dependency outside the queue fast path; they once were, on the instance).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTracingWith, tracingOn } from '@agentmesh/shared';
import { LogController } from 'fastify';
import t from 'tap';
import { httpSpans } from '../services/gateway/src/tracing.js';
import { callerTrace } from '../services/tool-host/src/tracing.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// fastify's own list: a method it adds is checked as soon as it ships.
const METHODS = Object.getOwnPropertyNames(LogController.prototype).filter((m) => m !== 'constructor');

/** Every .ts, .mts, .js and .mjs file under `dir`, without dependencies and builds. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (['node_modules', 'dist'].includes(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The methods of `controller` set on the instance itself, where a patch in place puts them. */
const ownMethods = (controller: object): string[] =>
  Object.entries(Object.getOwnPropertyDescriptors(controller))
    .filter(([, d]) => typeof d.value === 'function' || d.get !== undefined || d.set !== undefined)
    .map(([name]) => name);

/** Each class between `controller` and fastify's LogController, nearest first. */
const classesOf = (controller: object): string[] => {
  const out: string[] = [];
  for (
    let p = Object.getPrototypeOf(controller);
    p && p !== LogController.prototype;
    p = Object.getPrototypeOf(p)
  )
    out.push(p.constructor.name);
  return out;
};

t.test(
  "the gateway and the tool-host hand fastify a LogController that is fastify's own class or a subclass, nothing rewritten on it",
  async (t) => {
    t.ok(METHODS.includes('incomingRequest') && METHODS.includes('requestCompleted'), "fastify's methods");
    t.equal(tracingOn(), false);
    for (const [service, controller] of [
      ['gateway', httpSpans().logController],
      ['tool-host', callerTrace().logController],
    ] as const) {
      t.equal(
        Object.getPrototypeOf(controller),
        LogController.prototype,
        `${service}, tracing off: fastify's own`,
      );
      t.same(ownMethods(controller), [], `${service}, tracing off: no method on the instance`);
    }

    const tracing = await startTracingWith([]);
    t.teardown(() => tracing.shutdown());
    for (const [service, controller] of [
      ['gateway', httpSpans().logController],
      ['tool-host', callerTrace().logController],
    ] as const) {
      t.ok(controller instanceof LogController, `${service}, tracing on: a LogController`);
      t.same(classesOf(controller), ['TracedLogController'], `${service}: one subclass of it`);
      t.same(ownMethods(controller), [], `${service}: no method rewritten on the instance`);
    }
  },
);

t.test("no source file assigns to a method of fastify's LogController or to its prototype", async (t) => {
  const tops = ['services', 'packages'].flatMap((top) =>
    readdirSync(join(ROOT, top)).map((name) => join(ROOT, top, name, 'src')),
  );
  // `x.incomingRequest = …`, `x['incomingRequest'] = …`, and any use of the class's prototype.
  const names = METHODS.join('|');
  const assignment = new RegExp(
    `(?:\\.\\s*(?:${names})|\\[\\s*['"\`](?:${names})['"\`]\\s*\\])\\s*(?:=(?![=>])|\\|\\|=|\\?\\?=)|LogController\\s*\\.\\s*prototype`,
  );
  const found: string[] = [];
  for (const file of [...tops, join(ROOT, 'scripts')].flatMap(sources)) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (assignment.test(line)) found.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
  }
  t.strictSame(found, [], 'override in a subclass instead (fastify docs: the logController option)');
});
