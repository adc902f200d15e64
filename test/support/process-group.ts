import { readdirSync, readFileSync } from 'node:fs';

/**
 * The process of a group that runs `script` itself: the deepest one whose command line names it
 * (a launcher in between, such as a loader's CLI, names it too).
 */
export function scriptProcess(groupId: number, script: string): number | undefined {
  const running = groupMembers(groupId).filter((p) => p.cmdline.includes(script));
  return running.find((p) => !running.some((other) => other.parent === p.pid))?.pid;
}

interface Member {
  pid: number;
  parent: number;
  cmdline: string;
}

function groupMembers(groupId: number): Member[] {
  const members: Member[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [, parent, group] = stat
        .slice(stat.lastIndexOf(')') + 2)
        .split(' ')
        .map(Number) as number[];
      if (group !== groupId) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      members.push({ pid: Number(entry), parent: parent!, cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return members;
}
