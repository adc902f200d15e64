// `engines.node` says which Node the mesh runs on; every locked package must run on all of it, or
// `npm ci` warns EBADENGINE (issue 9: cookie 2, content-disposition 3 and openai 7 want Node 22).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import t from 'tap';

// semver is in node_modules already (npm's own range rules), untyped here.
const semver = createRequire(import.meta.url)('semver') as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
  subset(sub: string, dom: string): boolean;
};
const root = new URL('../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

t.test("every locked package's engines admit every Node that package.json's engines admit", async (t) => {
  const ours = pkg.engines.node;
  const minimum = semver.minVersion(ours)!.version;
  t.equal(
    lock.packages['']!.engines && (lock.packages['']!.engines as { node: string }).node,
    ours,
    'the lock agrees',
  );
  const refused: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const theirs = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (!path || !theirs) continue;
    if (!semver.satisfies(minimum, theirs) || !semver.subset(ours, theirs))
      refused.push(`${path}@${entry.version} wants node ${theirs}`);
  }
  t.strictSame(refused, [], `all of them run on node ${ours}`);
});

t.test('the Node running the tests is one package.json admits', async (t) => {
  t.ok(
    semver.satisfies(process.versions.node, pkg.engines.node),
    `${process.versions.node} in ${pkg.engines.node}`,
  );
});
