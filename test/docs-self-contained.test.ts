// A clone explains itself (issue 30): no file cites a document outside the repo, every docs path a
// file cites exists, the README fits on a screen, and every page of docs/ is reachable from it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import t from 'tap';

const root = new URL('../', import.meta.url).pathname;
const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter(
    (f) =>
      f &&
      existsSync(join(root, f)) &&
      /\.(ts|tsx|mts|mjs|js|md|ya?ml|lua|json|css|html)$|Dockerfile$/.test(f),
  );
// `.ci/run` runs the outside contract check when it is there: that is a check of the contract, not
// documentation the project relies on; this file names the patterns it looks for.
const own = tracked.filter((f) => f !== '.ci/run' && f !== 'test/docs-self-contained.test.ts');
const text = (f: string) => readFileSync(join(root, f), 'utf8');

t.test('no file cites a design document outside the repo', async (t) => {
  const outside = /DESIGN(\.md|\s*§|\s+\d)|\.\.\/shared\//;
  const found = own.filter((f) => outside.test(text(f)));
  t.strictSame(found, [], 'files that cite DESIGN or ../shared');
});

t.test('every section reference names a document in the repo or a public standard', async (t) => {
  // A bare "§16" points at a section of some document the reader has to guess; name the file
  // instead (docs/reference/bounds.md). Standards keep their own numbering: RFC 6750 §3.
  const code = own.filter((f) => /\.(ts|tsx|mts|mjs|js|lua)$/.test(f) && !f.startsWith('bench/results/'));
  const bare = /(?<!(?:RFC \d+|ECMA-\d+) )§\s*\w/;
  t.strictSame(
    code.filter((f) => bare.test(text(f))),
    [],
    'code files with a section sign that names no document',
  );
});

t.test('every upstream contract number in code has an entry in the contracts page', async (t) => {
  // "upstream contract 14" means the numbered behaviour of Apache Flink Agents' sub-agent framework
  // that docs/reference/upstream-contracts.md lists under `### 14. …`; a file that cites one names
  // that page, so a reader of the file knows where the number resolves.
  const page = 'docs/reference/upstream-contracts.md';
  const entries = new Set([...text(page).matchAll(/^### (\d+)\. /gm)].map(([, n]) => Number(n)));
  const code = own.filter(
    (f) => /\.(ts|tsx|mts|mjs|js|lua|ya?ml)$/.test(f) && !f.startsWith('bench/results/'),
  );
  const cited = /\bcontracts?[ -](\d+(?:(?:,\s*|\s+and\s+)\d+)*)/gi;
  const unnamed: string[] = [];
  const unknown: string[] = [];
  for (const f of code) {
    const numbers = [...text(f).matchAll(cited)].flatMap(([, list]) => list!.match(/\d+/g)!.map(Number));
    if (numbers.length === 0) continue;
    if (!text(f).includes(page)) unnamed.push(f);
    for (const n of new Set(numbers)) if (!entries.has(n)) unknown.push(`${f}: contract ${n}`);
  }
  t.ok(entries.size > 0, `${page} has numbered entries`);
  t.strictSame(unnamed, [], `code files citing a contract number without naming ${page}`);
  t.strictSame(unknown, [], `contract numbers with no entry in ${page}`);
});

t.test('every docs path a file cites exists', async (t) => {
  const missing = new Set<string>();
  for (const f of own) {
    for (const [path] of text(f).matchAll(/\bdocs\/[\w./-]+\.md\b/g)) {
      if (!existsSync(join(root, path))) missing.add(`${f}: ${path}`);
    }
  }
  t.strictSame([...missing], []);
});

t.test('the README fits on a screen and reaches every page of docs/', async (t) => {
  const readme = text('README.md');
  t.ok(readme.split('\n').length <= 200, `README.md has ${readme.split('\n').length} lines`);
  const pages = tracked.filter((f) => f.startsWith('docs/') && f.endsWith('.md'));
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file) || !existsSync(join(root, file))) return;
    seen.add(file);
    for (const [, link] of text(file).matchAll(/\]\(([^)#\s]+\.md)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(link!)) continue;
      visit(normalize(join(dirname(file), link!)));
    }
  };
  visit('README.md');
  t.strictSame(
    pages.filter((p) => !seen.has(p)),
    [],
    'pages no link path from the README reaches',
  );
});
