/** Starts noting this process's hops (true), or stops and writes them to $HOP_TRACE_DIR (false). */
export function hopTrace(start: boolean): void;
/** Notes an event of this process's own, now. */
export function hopMark(event: string): void;
