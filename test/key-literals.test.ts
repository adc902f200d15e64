// Every Redis key is built in packages/shared/src/keys.ts (docs/reference/redis-layout.md): this
// reads the source of every workspace for a key built anywhere else (issue 30). BullMQ's own Lua,
// which the fast path reads from the installed package, is not in any source tree, so nothing here
// needs an exception.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const KEYS = 'packages/shared/src/keys.ts';

/** What building a key looks like, each with an example it catches. */
const KEY_BUILDING: { pattern: RegExp; example: string }[] = [
  // A literal under the default prefixes: 'mesh:{recent}', `bull:agent-x:wait`.
  { pattern: /['"`](?:mesh|bull)[:{]/, example: "redis.get('mesh:{recent}')" },
  // A template starting from a layout's prefix.
  {
    pattern: /\$\{\s*[\w.]*\b(?:keys|layout)\.(?:prefix|bullPrefix)\s*\}/,
    example: `const k = \`\${keys.prefix}:x\`;`,
  },
  // A template appending to a key: `${queueKey}blocked`, `${job.parentKey}:dependencies`.
  {
    pattern: /\$\{\s*[\w.!?]*[a-z]Key!?\s*\}[\w:-]/,
    example: `const k = \`\${job.parentKey}:dependencies\`;`,
  },
  // Lua appending a suffix to a key: queueKey .. ':wait'.
  { pattern: /\.\.\s*(['"])[:][\w-]+\1/, example: "redis.call('LLEN', queueKey .. ':wait')" },
  // One of BullMQ's keys of a queue named by a literal suffix.
  { pattern: /\btoKey\(\s*['"`][^'"`]+['"`]/, example: "queue.toKey('stalled')" },
];

/** Every .ts and .lua file under `dir` (the Lua steps' keys come in KEYS, ARGV or the loader's constants). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return (path.endsWith('.ts') && !path.endsWith('.d.ts')) || path.endsWith('.lua') ? [path] : [];
  });
}

/** The lines of `text` that build a key, as "line: text". */
function keyBuildingLines(text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, i) =>
      KEY_BUILDING.some(({ pattern }) => pattern.test(line)) ? [`${i + 1}: ${line.trim()}`] : [],
    );
}

t.test('each pattern catches its example, and none an ordinary line', async (t) => {
  for (const { example } of KEY_BUILDING) t.equal(keyBuildingLines(example).length, 1, example);
  const ordinary = [
    `const label = \`step:\${name}\`;`,
    `const token = \`\${w.id}:h\${n}\`;`,
    `report(\`no \${key}: x\`)`,
  ];
  t.same(keyBuildingLines(ordinary.join('\n')), []);
});

t.test('no source file builds a Redis key outside keys.ts', async (t) => {
  const files = ['packages', 'services']
    .flatMap((top) => readdirSync(join(ROOT, top)).map((name) => join(ROOT, top, name, 'src')))
    .filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    .flatMap(sources)
    .map((f) => relative(ROOT, f));
  t.ok(files.includes(KEYS) && files.length > 200, 'the source trees were found');
  t.ok(files.filter((f) => f.endsWith('.lua')).length > 20, 'the .lua files were found');
  t.ok(
    keyBuildingLines(readFileSync(join(ROOT, KEYS), 'utf8')).length > 0,
    'keys.ts itself is found building keys',
  );
  const elsewhere = files
    .filter((f) => f !== KEYS)
    .flatMap((f) => keyBuildingLines(readFileSync(join(ROOT, f), 'utf8')).map((line) => `${f}:${line}`));
  t.strictSame(elsewhere, []);
});
