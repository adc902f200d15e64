// The demo's search_docs tool over demo/docs/*.md.
import { readdirSync } from 'node:fs';
import t from 'tap';
import { searchDocs } from '../demo/tools/index.js';
import { DOCS_DIR, searchCorpus, tokenize } from '../demo/tools/search-corpus.js';

const search = (query: string, k?: number) =>
  searchDocs.run(k === undefined ? { query } : { query, k }, {} as never);

t.test('the corpus holds six to ten markdown documents', async (t) => {
  const files = readdirSync(DOCS_DIR).filter((f) => f.endsWith('.md'));
  t.ok(files.length >= 6 && files.length <= 10, `${files.length} documents`);
});

t.test('a question finds the document about it first, with its title and a matching excerpt', async (t) => {
  const [top] = await search('How does Redis persist data with the append-only file?');
  t.match(top, {
    doc: 'redis-persistence',
    title: 'Redis persistence: RDB snapshots and the append-only file',
    excerpt: /append-only file \(AOF\) logs every write command/,
  });
  t.ok(top!.score > 0);
  t.equal((await search('how do BullMQ flows wait for child jobs'))[0]?.doc, 'bullmq-flows');
  t.equal((await search('Last-Event-ID reconnect'))[0]?.doc, 'server-sent-events');
  t.equal((await search('retry 429 with jitter'))[0]?.doc, 'exponential-backoff');
});

t.test('results come best first, at most k of them, each {doc, title, excerpt, score}', async (t) => {
  const hits = await search('Redis jobs queue schema retry', 5);
  t.ok(hits.length >= 2 && hits.length <= 5);
  for (const hit of hits) t.strictSame(Object.keys(hit), ['doc', 'title', 'excerpt', 'score']);
  const scores = hits.map((h) => h.score);
  t.strictSame(
    scores,
    [...scores].sort((a, b) => b - a),
  );
  t.equal((await search('Redis jobs queue schema retry', 1)).length, 1);
  t.equal((await search('Redis')).length <= 3, true, 'k defaults to 3');
});

t.test('a query sharing no term with any document finds nothing', async (t) => {
  t.strictSame(await search('zebra giraffe'), []);
  t.strictSame(searchCorpus('the and of', 3), [], 'stopwords alone match nothing');
});

t.test('terms are lower-cased, stopwords dropped and plurals folded', async (t) => {
  t.strictSame(tokenize('What are the Jobs of BullMQ Flows?'), ['job', 'bullmq', 'flow']);
});

t.test('excerpts are short plain text', async (t) => {
  for (const hit of await search('OpenAPI JSON Schema components', 5)) {
    t.ok(hit.excerpt.length <= 330, hit.doc);
    t.notMatch(hit.excerpt, /\*\*|`/, hit.doc);
  }
});

t.test('the tool is idempotent and bounds k to 1..5 in its input schema', async (t) => {
  t.equal(searchDocs.name, 'search_docs');
  t.equal(searchDocs.idempotent, true);
  t.match(searchDocs.input, {
    required: ['query'],
    properties: { k: { type: 'integer', minimum: 1, maximum: 5 } },
    additionalProperties: false,
  });
});
