import { readdir, readFile, readlink } from 'node:fs/promises';

/** A process that listens on a TCP port: its pid and command line. */
export interface PortOwner {
  pid: number;
  command: string;
}

/**
 * The process listening on TCP `port`, found through /proc (Linux): the socket's inode in
 * /proc/net/tcp{,6}, then the process holding it. Undefined elsewhere, or when the process is
 * another user's (its descriptors cannot be read).
 */
export async function findPortOwner(port: number): Promise<PortOwner | undefined> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const row of text.split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; the inode is the tenth column.
      if (cols[3] === '0A' && Number.parseInt(cols[1]?.split(':')[1] ?? '', 16) === port)
        inodes.add(cols[9]!);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const pid of (await readdir('/proc').catch(() => [] as string[])).filter((d) => /^\d+$/.test(d))) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) {
        const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        return { pid: Number(pid), command: cmdline.split('\0').filter(Boolean).join(' ') };
      }
    }
  }
  return undefined;
}
