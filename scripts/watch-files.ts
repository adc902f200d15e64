import fs from 'node:fs';

/** Files being watched: `set` replaces the list, `close` stops every watch. */
export interface FileWatch {
  set(files: readonly string[]): void;
  close(): void;
}

/**
 * Calls `onChange` with the files that changed (content, or replaced: an editor's save by rename
 * included, and a file deleted or created again), once they have been quiet for `quietMs`. Polls
 * each file's stat (fs.watchFile): unlike inotify watches, that survives a file being replaced.
 */
export function watchFiles(
  onChange: (files: string[]) => void,
  { intervalMs = 250, quietMs = 300 }: { intervalMs?: number; quietMs?: number } = {},
): FileWatch {
  const watched = new Map<string, (curr: fs.Stats, prev: fs.Stats) => void>();
  const changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    const files = [...changed];
    changed.clear();
    if (files.length > 0) onChange(files);
  };
  const watch = (file: string) => {
    const listener = (curr: fs.Stats, prev: fs.Stats) => {
      if (curr.mtimeMs === prev.mtimeMs && curr.size === prev.size && curr.ino === prev.ino) return;
      changed.add(file);
      if (timer) clearTimeout(timer);
      timer = setTimeout(flush, quietMs);
    };
    fs.watchFile(file, { interval: intervalMs, persistent: false }, listener);
    watched.set(file, listener);
  };
  return {
    set(files) {
      const wanted = new Set(files);
      for (const [file, listener] of watched) {
        if (wanted.has(file)) continue;
        fs.unwatchFile(file, listener);
        watched.delete(file);
      }
      for (const file of wanted) if (!watched.has(file)) watch(file);
    },
    close() {
      if (timer) clearTimeout(timer);
      for (const [file, listener] of watched) fs.unwatchFile(file, listener);
      watched.clear();
    },
  };
}
