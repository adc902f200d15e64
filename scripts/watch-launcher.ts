import { readFileSync } from 'node:fs';

interface Link {
  pid: number;
  parent: number;
}

/**
 * Calls `onGone` once when a process of the chain that launched this one goes away. `npm start`
 * runs `sh -c "tsx scripts/start.ts"`, and tsx runs this script in a child: npm forwards SIGTERM
 * to the shell, which dies without passing it on, leaving tsx and this script orphaned. So the
 * chain up to npm (the ancestors running our npm script) is recorded at start, and a process of
 * it whose parent changes (it was orphaned) or that disappears means the launcher is gone.
 * Without /proc (not Linux) only this process's own parent is watched.
 */
export function watchLauncher(onGone: (pid: number) => void, intervalMs = 500): () => void {
  const chain = launcherChain();
  const timer = setInterval(() => {
    const broken = chain.find((link) => parentOf(link.pid) !== link.parent);
    if (!broken) return;
    clearInterval(timer);
    onGone(broken.parent);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

function launcherChain(): Link[] {
  const chain: Link[] = [{ pid: process.pid, parent: process.ppid }];
  const script = process.env.npm_lifecycle_script;
  if (!script) return chain;
  const marker = `npm_lifecycle_script=${script}\0`;
  for (let pid = process.ppid; pid > 1 && chain.length < 16; ) {
    const parent = parentOf(pid);
    if (parent === undefined || !environOf(pid).includes(`\0${marker}`)) break;
    chain.push({ pid, parent });
    pid = parent;
  }
  return chain;
}

// From /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
function parentOf(pid: number): number | undefined {
  if (pid === process.pid) return process.ppid;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? undefined : Number(fields[1]);
  } catch {
    return undefined;
  }
}

function environOf(pid: number): string {
  try {
    return `\0${readFileSync(`/proc/${pid}/environ`, 'utf8')}`;
  } catch {
    return '';
  }
}
