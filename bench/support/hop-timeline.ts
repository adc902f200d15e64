/** One line a traced process wrote (hop-trace.mjs): when (µs, a clock all processes share), who, what. */
export interface HopEvent {
  us: number;
  role: string;
  event: string;
}

/** One step of the timeline: when it happens after the client's send, and how long after the step before. */
export interface HopStep {
  role: string;
  event: string;
  /** Which occurrence of this event of this role within a run (0 for the first). */
  nth: number;
  /** Median time from the client's send, ms. */
  atMs: number;
  /** Median `atMs` less the step before's, ms. */
  gapMs: number;
  /** In how many runs of those read it happened. */
  runs: number;
}

/** The client's marks around each run (bench/hops.ts). */
export const SEND = 'send';
export const ANSWER = 'answer';

/** The lines of one process's file (`<µs> <event>` each), as events of `role`. */
export function parseHopLines(role: string, text: string): HopEvent[] {
  const events: HopEvent[] = [];
  for (const line of text.split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) events.push({ us: Number(line.slice(0, space)), role, event: line.slice(space + 1) });
  }
  return events;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

/**
 * The median timeline of sequential runs: the events of every process cut into runs at the client's
 * `send` marks, each timed from its run's send; an event counts as a step when it happened in at
 * least `share` of the runs (an event of the run before that spills into this one, such as a
 * completion sent after the answer, comes in fewer and is left out). `skip` runs at the start are
 * not read. Steps come in the order of their median times.
 */
export function hopTimeline(events: HopEvent[], { skip = 0, share = 0.8 } = {}): HopStep[] {
  const sorted = [...events].sort((a, b) => a.us - b.us);
  const runs: HopEvent[][] = [];
  for (const e of sorted) {
    if (e.role === 'client' && e.event === SEND) runs.push([e]);
    else runs.at(-1)?.push(e);
  }
  const read = runs.slice(skip).filter((r) => r.some((e) => e.role === 'client' && e.event === ANSWER));
  const at = new Map<string, { role: string; event: string; nth: number; times: number[] }>();
  for (const run of read) {
    const t0 = run[0]!.us;
    const seen = new Map<string, number>();
    for (const e of run) {
      const k = `${e.role}\n${e.event}`;
      const nth = seen.get(k) ?? 0;
      seen.set(k, nth + 1);
      const step = at.get(`${k}\n${nth}`) ?? { role: e.role, event: e.event, nth, times: [] };
      step.times.push(e.us - t0);
      at.set(`${k}\n${nth}`, step);
    }
  }
  const steps = [...at.values()]
    .filter((s) => s.times.length >= read.length * share)
    .map((s) => ({ role: s.role, event: s.event, nth: s.nth, us: median(s.times), runs: s.times.length }))
    .sort((a, b) => a.us - b.us);
  // In whole µs until here, so a gap is exact.
  return steps.map(({ us, ...s }, i) => ({
    ...s,
    atMs: us / 1000,
    gapMs: (us - (i === 0 ? 0 : steps[i - 1]!.us)) / 1000,
  }));
}
