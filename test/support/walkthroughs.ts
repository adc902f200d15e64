// The marked blocks of the docs (docs/README.md, "For contributors"): a fenced block right after a
// `<!-- walkthrough: name -->` line is a walkthrough that test/docs-walkthroughs.test.ts runs.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { spawnUntracked } from './untracked-spawn.js';

/** One marked block: its name, its language (`sh` or `js`), its code, and where it is. */
export interface Walkthrough {
  name: string;
  lang: 'sh' | 'js';
  code: string;
  file: string;
  line: number;
}

const MARKER = /^<!-- walkthrough: ([a-z0-9-]+) -->$/;
const FENCE_OPEN = /^```(\w*)$/;

/** The markdown files a walkthrough may live in: the README and every page under docs/, relative to `root`. */
export function docFiles(root: string): string[] {
  const pages = (dir: string): string[] =>
    readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? pages(path.join(dir, e.name))
        : e.name.endsWith('.md')
          ? [path.join(dir, e.name)]
          : [],
    );
  return ['README.md', ...pages('docs').sort()];
}

/**
 * Every marked block of `files` (paths relative to `root`), in order. A marker not followed at once
 * by a fenced `sh` or `js` block, an unclosed block or a repeated name throws, naming file and line.
 */
export function readWalkthroughs(root: string, files: readonly string[]): Walkthrough[] {
  const found: Walkthrough[] = [];
  for (const file of files) {
    const lines = readFileSync(path.join(root, file), 'utf8').split('\n');
    // The fence a block outside a walkthrough opened (a marker inside it is an example, not a marker).
    let fence: string | undefined;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const ticks = /^(`{3,})/.exec(line)?.[1];
      if (fence !== undefined) {
        if (ticks !== undefined && line.trim() === fence) fence = undefined;
        continue;
      }
      if (ticks !== undefined) {
        fence = ticks;
        continue;
      }
      const marker = MARKER.exec(line);
      if (!marker) continue;
      const where = `${file}:${i + 1}`;
      const lang = FENCE_OPEN.exec(lines[i + 1] ?? '')?.[1];
      if (lang !== 'sh' && lang !== 'js')
        throw new Error(`${where}: a walkthrough marker must be followed by a \`\`\`sh or \`\`\`js block`);
      const close = lines.indexOf('```', i + 2);
      if (close < 0) throw new Error(`${where}: the walkthrough's block is not closed`);
      const name = marker[1]!;
      const twin = found.find((w) => w.name === name);
      if (twin)
        throw new Error(`${where}: walkthrough "${name}" is marked already at ${twin.file}:${twin.line}`);
      found.push({ name, lang, code: lines.slice(i + 2, close).join('\n'), file, line: i + 1 });
      i = close;
    }
  }
  return found;
}

/** What a walkthrough printed, and how it ended. */
export interface WalkthroughRun {
  stdout: string;
  stderr: string;
  code: number | null;
  timedOut: boolean;
}

/**
 * Runs a walkthrough as a reader would, from `cwd`: an `sh` block in `bash -eo pipefail`, a `js`
 * block as an ES module on node's stdin. Its own process group, killed whole after `timeoutMs`.
 */
export function runWalkthrough(
  w: Walkthrough,
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<WalkthroughRun> {
  const [command, args] =
    w.lang === 'sh' ? ['bash', ['-eo', 'pipefail', '-c', w.code]] : ['node', ['--input-type=module']];
  const child = spawnUntracked(command, args, {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: 'pipe',
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdin!.end(w.lang === 'js' ? w.code : '');
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
  }, opts.timeoutMs);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code, timedOut });
    });
  });
}
