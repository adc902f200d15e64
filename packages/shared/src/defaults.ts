// Every default and fixed bound that more than one module relies on, each said once.

/** What agent and tool names must match: they become model function names (`_subagent_` + 54 = 64). */
export const NAME_PATTERN = '^[a-zA-Z0-9_-]{1,54}$';

/** Where the tool-host is when the config does not say. */
export const DEFAULT_TOOL_HOST = 'http://127.0.0.1:3002';

/** The iteration limit of a ReAct agent that does not set `maxIterations`. */
export const DEFAULT_MAX_ITERATIONS = 10;

/**
 * How long a tool without `timeoutMs` may run. The tool-host enforces it; the runner waits as long
 * for the answer (it waited 60 s before, but the tool-host's 30 s always ended the call first).
 */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/** How long a draining runner lets the jobs it holds finish before requeueing them (RUNNER_DRAIN_MS). */
export const DEFAULT_DRAIN_MS = 30_000;

/** Bytes of a tool or sub-agent result an invocation keeps (MESH_MAX_RESULT_BYTES, docs/reference/callables-and-results.md): 64 KiB. */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;
/** Jobs one runner works on at once across its agents (RUNNER_CONCURRENCY): chosen by measurement, docs/performance.md. */
export const DEFAULT_RUNNER_CONCURRENCY = 256;

/** Tool and sub-agent calls of one model reply that run (MESH_MAX_CALLS_PER_TURN, docs/reference/bounds.md). */
export const DEFAULT_MAX_CALLS_PER_TURN = 64;

/** How long one request to a remote A2A agent may take, headers and body (MESH_REMOTE_REQUEST_SECONDS, docs/reference/bounds.md). */
export const DEFAULT_REMOTE_REQUEST_SECONDS = 30;

/** Bytes of a model reply body (MESH_MAX_MODEL_REPLY_BYTES, docs/reference/bounds.md). */
export const DEFAULT_MAX_MODEL_REPLY_BYTES = 4 * 1024 * 1024;

/** How long a model request may receive nothing before the attempt fails (MESH_MODEL_IDLE_SECONDS). */
export const DEFAULT_MODEL_IDLE_SECONDS = 60;

/** How long a model call's unsent text (after its first piece, sent at once) waits to go out as one delta (MESH_DELTA_FLUSH_MS). */
export const DEFAULT_DELTA_FLUSH_MS = 25;

/** Bytes of a model call's unsent text that go out as a delta at once, without waiting. */
export const DELTA_FLUSH_BYTES = 4096;

/** How long a tree's delta stream is kept after its last write (MESH_DELTA_RETENTION_SECONDS). */
export const DEFAULT_DELTA_RETENTION_SECONDS = 300;

/** The entries a tree's delta stream is trimmed to (`XADD MAXLEN`). */
export const DELTA_STREAM_MAXLEN = 10_000;

/**
 * Bytes of text (a model call's content, an output's JSON) an event carries itself; a larger one is
 * stored once, in the record or state it belongs to, and the event refers to it (`contentRef`,
 * `outputRef`): the gateway puts it back when it streams the event (docs/reference/bounds.md).
 */
export const EVENT_INLINE_BYTES = 16 * 1024;

/** The approximate length each invocation tree's event stream is trimmed to (`XADD MAXLEN ~`). */
export const EVENT_STREAM_MAXLEN = 100_000;

/** How long a session lives after its last use (MESH_SESSION_TTL_SECONDS, docs/guides/sessions.md): 30 days. */
export const DEFAULT_SESSION_TTL_SECONDS = 30 * 24 * 3600;

/** What a session id must match (docs/guides/sessions.md); it becomes part of the session's Redis keys. */
export const SESSION_ID_PATTERN = '^[A-Za-z0-9_-]{1,128}$';

/** Messages a session keeps (the newest; an even number: whole exchanges drop out). */
export const SESSION_MAX_MESSAGES = 200;

/**
 * Bytes of a session's stored messages, their JSON (MESH_SESSION_MAX_BYTES, docs/guides/sessions.md, docs/reference/bounds.md): the
 * newest whole exchanges within it are kept, each message cut to a quarter of it.
 */
export const DEFAULT_SESSION_MAX_BYTES = 1024 * 1024;

/** Messages of one page of GET /sessions/{id} at most, and the bytes (their JSON) a page stops before. */
export const SESSION_PAGE_MAX_MESSAGES = 200;
export const SESSION_PAGE_MAX_BYTES = 1024 * 1024;

/** Characters of history one invocation of a session receives (the newest whole exchanges within it). */
export const SESSION_MAX_HISTORY_CHARS = 1024 * 1024;

/** Invocation ids a session lists (the newest). */
export const SESSION_MAX_INVOCATIONS = 1000;

/** Invocations that may wait for a session's running one; past it `enqueue` answers `session_busy`. */
export const SESSION_MAX_QUEUED = 100;

/** Call records of the invocation a fork reads (MESH_MAX_FORK_RECORDS, docs/reference/bounds.md, docs/guides/durability.md). */
export const DEFAULT_MAX_FORK_RECORDS = 10_000;

/** Bytes of the call records of the invocation a fork reads (MESH_MAX_FORK_BYTES, docs/reference/bounds.md, docs/guides/durability.md). */
export const DEFAULT_MAX_FORK_BYTES = 32 * 1024 * 1024;

/**
 * Bytes one client's event stream may hold in the gateway's buffer (MESH_STREAM_BUFFER_BYTES,
 * docs/reference/bounds.md): past it its deltas are dropped (the next says `gap: true`); structural events wait.
 */
export const DEFAULT_STREAM_BUFFER_BYTES = 1024 * 1024;

/**
 * How often each service's event-loop delay is sampled for its `nodejs_eventloop_lag_*` metrics, ms
 * (prom-client's `eventLoopMonitoringPrecision`; its default, 10, wakes an idle process 100 times a
 * second and costs it about 6 ms of CPU a second on a 2-core VM; docs/reference/benchmarks.md, "An idle mesh").
 * A stall of this length or longer always shows in the metrics; shorter ones are sampled.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;
