import { type Static, Type } from '@sinclair/typebox';
import { CallKind, CallStatus, CodedError } from './invocation-view.js';

/** One tool call the model asked for, as the provider sent it (arguments still raw text). */
export const ModelToolCall = Type.Object({
  /** The provider's own id: metadata only, never used as a key (providers don't guarantee it). */
  id: Type.String(),
  name: Type.String(),
  arguments: Type.String(),
});
export type ModelToolCall = Static<typeof ModelToolCall>;

/** A model's reply as recorded: text and/or tool calls, and token usage. */
export const ModelReply = Type.Object({
  content: Type.Union([Type.String(), Type.Null()]),
  toolCalls: Type.Array(ModelToolCall),
  usage: Type.Object({
    promptTokens: Type.Integer(),
    completionTokens: Type.Integer(),
    /** The reply reported no tokens and its tree has a budget: the counts are an estimate (docs/guides/approvals-and-budgets.md). */
    estimated: Type.Optional(Type.Literal(true)),
  }),
  /** As stored, for a text past 16 KiB: `content` is null and the text is the tree's (store/tree-texts.ts). */
  contentRef: Type.Optional(Type.String()),
});
export type ModelReply = Static<typeof ModelReply>;

/** The durable record of one call, keyed by call id: `started → succeeded | failed`. */
export const CallRecord = Type.Object({
  v: Type.Literal(1),
  callId: Type.String(),
  kind: CallKind,
  name: Type.String(),
  status: CallStatus,
  startedAt: Type.String(),
  finishedAt: Type.Optional(Type.String()),
  runner: Type.Optional(Type.String()),
  /** How many times the call was started: 2 and more when it was re-run after a crash (absent = 1). */
  attempt: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Sub-agent calls: the child invocation, from the moment it is submitted. */
  childId: Type.Optional(Type.String()),
  /** Model calls: the reply. */
  reply: Type.Optional(ModelReply),
  /** Tool and sub-agent calls: the provider's tool-call id (metadata) and the tool message content. */
  providerId: Type.Optional(Type.String()),
  content: Type.Optional(Type.String()),
  /**
   * As stored, for a content past 16 KiB: no `content`, the tree's text it is (store/tree-texts.ts),
   * cut at `contentCut` bytes (as truncateResult cuts) when set.
   */
  contentRef: Type.Optional(Type.String()),
  contentCut: Type.Optional(Type.Integer({ minimum: 0 })),
  error: Type.Optional(CodedError),
  /**
   * Code agents: the `ctx.memory` writes committed with this record, `[key, value JSON]` in
   * order (an empty value deletes the key); a replay applies them when it reaches the record.
   */
  memory: Type.Optional(Type.Array(Type.Tuple([Type.String(), Type.String()]))),
  /**
   * Code agents' steps: how many of `memory`'s writes were made before the step's fn ran (the rest
   * were made while it ran); absent when all were. A fork that gives the step's result keeps those.
   */
  memoryBefore: Type.Optional(Type.Integer()),
  /** A fork's call copied from the invocation it was forked from (docs/guides/durability.md), with its timings. */
  reused: Type.Optional(Type.Literal(true)),
  /** A fork's call whose result the fork request gave: it never ran (docs/guides/durability.md). */
  resultGiven: Type.Optional(Type.Literal(true)),
  /**
   * A code agent's delegation in a fork: the output `ctx.subagent` returns, as JSON text (the child
   * belongs to the original tree, or there is none when the result was given).
   */
  outputJson: Type.Optional(Type.String()),
});
export type CallRecord = Static<typeof CallRecord>;
