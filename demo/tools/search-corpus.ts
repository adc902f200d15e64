import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One search hit: the document's id (its file name), title, best-matching passage and score. */
export interface SearchHit {
  doc: string;
  title: string;
  excerpt: string;
  score: number;
}

interface Doc {
  doc: string;
  title: string;
  passages: string[];
  terms: Map<string, number>;
  titleTerms: Set<string>;
}

/** The markdown documents search_docs serves. */
export const DOCS_DIR = fileURLToPath(new URL('../docs/', import.meta.url));

const STOPWORDS = new Set(
  (
    'a an and are as at be but by can do does for from how i in into is it its of on or so that the their ' +
    'then there these this to was what when where which while who why will with you your about also ' +
    'me tell explain describe please should would could'
  ).split(' '),
);
const EXCERPT_CHARS = 320;
const RELATIVE_CUTOFF = 0.25;

/** Lower-case content words, lightly stemmed (`jobs` → `job`), so questions match prose. */
export function tokenize(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? [])
    .filter((w) => !STOPWORDS.has(w) && (w.length > 1 || /\d/.test(w)))
    .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

let corpus: Doc[] | undefined;

// Read once per process: a title from each file's `# ` heading, passages by paragraph. Reading (and
// searching) synchronously keeps the tool instant: the corpus is a few kilobytes.
function loadCorpus(): Doc[] {
  corpus ??= readdirSync(DOCS_DIR)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((file) => {
      const text = readFileSync(`${DOCS_DIR}${file}`, 'utf8');
      const title = /^#\s+(.+)$/m.exec(text)?.[1]?.trim() ?? file;
      const body = text.replace(/^#\s+.+$/m, '');
      const passages = body
        .split(/\n\s*\n/)
        .map((p) =>
          p
            .replace(/\*\*|`/g, '')
            .replace(/\s+/g, ' ')
            .trim(),
        )
        .filter(Boolean);
      const terms = new Map<string, number>();
      for (const t of tokenize(`${title} ${body}`)) terms.set(t, (terms.get(t) ?? 0) + 1);
      return { doc: file.replace(/\.md$/, ''), title, passages, terms, titleTerms: new Set(tokenize(title)) };
    });
  return corpus;
}

/**
 * Ranks documents by term overlap with the query: each distinct query term found in a document adds
 * its rarity (idf) times a damped term frequency, doubled when the term is in the title.
 * Documents sharing no term with the query, or scoring under a quarter of the best, are left out.
 */
export function searchCorpus(query: string, k: number): SearchHit[] {
  const docs = loadCorpus();
  const queryTerms = [...new Set(tokenize(query))];
  const idf = (t: string) => Math.log(1 + docs.length / (1 + docs.filter((d) => d.terms.has(t)).length));
  return docs
    .map((d) => {
      let score = 0;
      for (const t of queryTerms) {
        const tf = d.terms.get(t) ?? 0;
        if (tf > 0) score += idf(t) * (1 + Math.log(tf)) * (d.titleTerms.has(t) ? 2 : 1);
      }
      return { d, score };
    })
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || a.d.doc.localeCompare(b.d.doc))
    .filter((r, _, ranked) => r.score >= RELATIVE_CUTOFF * ranked[0]!.score)
    .slice(0, k)
    .map(({ d, score }) => ({
      doc: d.doc,
      title: d.title,
      excerpt: bestPassage(d.passages, queryTerms),
      score: Math.round(score * 1000) / 1000,
    }));
}

function bestPassage(passages: string[], queryTerms: string[]): string {
  let best = passages[0] ?? '';
  let bestHits = -1;
  for (const p of passages) {
    const words = new Set(tokenize(p));
    const hits = queryTerms.filter((t) => words.has(t)).length;
    if (hits > bestHits) [best, bestHits] = [p, hits];
  }
  return best.length <= EXCERPT_CHARS ? best : `${best.slice(0, EXCERPT_CHARS).replace(/\s+\S*$/, '')} …`;
}
