import { batch, type Signal, signal } from '@preact/signals';
import { ApiError, api } from './api';
import { followEvents } from './event-stream';
import type { CallDetail, InvocationStatus, InvocationView, MeshEvent } from './types';
import { isTerminal } from './types';
import { type NumberedView, ViewReads } from './view-reads';

/** One node of a tree as the page knows it: its latest view and its model calls' text. */
export interface NodeModel {
  id: string;
  agent: string;
  parentId?: string;
  /** The delegation call of the parent that started it (docs/guides/streaming.md `parentCallId`). */
  parentCallId?: string;
  depth: number;
  view?: InvocationView;
  /** The latest status known, from the view or a newer `status` event. */
  status?: InvocationStatus;
  /** Model call id → its text since its last reset (deltas, or the `model_call` event's content). */
  texts: Record<string, string>;
  /** Its view could not be read (expired, or never visible). */
  missing?: boolean;
}

/** The call whose content the detail panel shows. */
export type Selection = { nodeId: string; callId: string };
export type DetailState =
  | { state: 'none' }
  | { state: 'loading'; sel: Selection }
  | { state: 'ok'; sel: Selection; detail: CallDetail }
  | { state: 'error'; sel: Selection; message: string };

export type Connection = 'connecting' | 'live' | 'reconnecting' | 'ended' | 'failed';

/**
 * A delegation tree followed live (docs/guides/console.md): the views of its nodes, read from the REST API,
 * kept current by the tree's event stream (each event re-reads its node; the answer to the request
 * sent last wins: view-reads.ts), texts from its `model_call` and `delta` events.
 */
export class TreeStore {
  readonly nodes = new Map<string, Signal<NodeModel>>();
  /** Bumped when a node is added: whoever lists nodes re-reads. */
  readonly size = signal(0);
  readonly connection = signal<Connection>('connecting');
  readonly notFound = signal(false);
  readonly now = signal(Date.now());
  /** The start of the tree's time axis: the root's creation (set once, when its view arrives). */
  readonly origin = signal<number | undefined>(undefined);
  readonly selected = signal<DetailState>({ state: 'none' });
  private stopStream: (() => void) | undefined;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private polls = 0;
  private readonly reads = new ViewReads((id, read) => this.read(id, read));
  /** Per node, the number of the request whose answer it shows (view-reads.ts). */
  private readonly shown = new Map<string, number>();

  constructor(readonly rootId: string) {
    this.add({ id: this.rootId, agent: '', depth: 0, texts: {} });
  }

  /** Starts reading the tree and following its events. */
  start(): void {
    this.reads.setStopped(false);
    this.reads.refresh(this.rootId);
    this.stopStream = followEvents(this.eventsUrl(), {
      event: (e, type) => this.onEvent(e, type),
      connected: (reconnect) => {
        this.connection.value = 'live';
        // Whatever changed while the stream was down is read again.
        if (reconnect) for (const id of this.nodes.keys()) this.reads.refresh(id);
      },
      over: () => this.isOver(),
      ended: () => {
        this.connection.value = 'ended';
        this.settle();
      },
      failed: (status) => {
        this.connection.value = 'failed';
        if (status === 404) this.notFound.value = true;
      },
    });
    this.ticker = setInterval(() => this.tick(), 1000);
  }

  /** Stops following (the page left the tree). */
  close(): void {
    this.reads.setStopped(true);
    this.stopStream?.();
    clearInterval(this.ticker);
  }

  /** The start of the time axis, in epoch milliseconds. */
  t0(): number {
    return this.origin.value ?? 0;
  }

  node(id: string): Signal<NodeModel> | undefined {
    return this.nodes.get(id);
  }

  /** Cancels a node and its subtree (DELETE /invocations/{id}). */
  async cancel(id: string): Promise<void> {
    this.apply(...(await this.reads.request(`/invocations/${id}`, { method: 'DELETE' })));
  }

  /** Decides a pending approval of node `id` (docs/guides/approvals-and-budgets.md); an empty reason is none. */
  async decide(id: string, callId: string, approved: boolean, reason = ''): Promise<void> {
    const body = approved || reason === '' ? { approved } : { approved, reason };
    const path = `/invocations/${id}/approvals/${encodeURIComponent(callId)}`;
    this.apply(...(await this.reads.request(path, { method: 'POST', body })));
  }

  /** Shows what call `callId` of node `nodeId` did in the detail panel. */
  select(nodeId: string, callId: string): void {
    const sel = { nodeId, callId };
    this.selected.value = { state: 'loading', sel };
    void this.loadDetail(sel);
  }

  private async loadDetail(sel: Selection): Promise<void> {
    const path = `/invocations/${sel.nodeId}/calls/${encodeURIComponent(sel.callId)}`;
    const same = () => {
      const cur = this.selected.value;
      return cur.state !== 'none' && cur.sel.nodeId === sel.nodeId && cur.sel.callId === sel.callId;
    };
    try {
      const detail = await api<CallDetail>(path);
      if (same()) this.selected.value = { state: 'ok', sel, detail };
    } catch (e) {
      if (same()) this.selected.value = { state: 'error', sel, message: (e as Error).message };
    }
  }

  private eventsUrl(): string {
    // With each model call's text as it is written (docs/guides/streaming.md `delta` events).
    return `/invocations/${this.rootId}/events?deltas=true`;
  }

  private add(model: NodeModel): Signal<NodeModel> {
    const s = signal(model);
    this.nodes.set(model.id, s);
    this.size.value++;
    return s;
  }

  private isOver(): boolean {
    const root = this.nodes.get(this.rootId)?.value;
    return root?.status !== undefined && isTerminal(root.status);
  }

  /** Takes in a re-read of node `id`: its view, or that it is gone (404). */
  private async read(id: string, read: Promise<NumberedView>): Promise<void> {
    try {
      this.apply(...(await read));
    } catch (e) {
      const node = this.nodes.get(id);
      if (e instanceof ApiError && e.status === 404 && node) {
        node.value = { ...node.value, missing: true };
        if (id === this.rootId) this.notFound.value = true;
      }
    }
  }

  /**
   * Takes in the view that request number `asked` answered: the node's status and calls, and the
   * children its delegations name. A view asked for before the one the node shows is older (a read
   * in flight while Cancel or a decision was answered): left out, or the page would show the
   * decided approval, or the run, again until the next read.
   */
  private apply(view: InvocationView, asked: number): void {
    const node = this.nodes.get(view.id);
    if (!node || asked < (this.shown.get(view.id) ?? 0)) return;
    // An invocation's end is final. A read answered late (in flight when the run ended or was
    // cancelled, answered after the view or the event that ended it) does not take that back.
    const prev = node.value;
    const ended = (status: string | undefined) => status !== undefined && isTerminal(status);
    if (ended(prev.view?.status) && !ended(view.status)) return;
    const status = ended(prev.status) && !ended(view.status) ? prev.status : view.status;
    this.shown.set(view.id, asked);
    batch(() => {
      if (view.id === this.rootId && this.origin.value === undefined)
        this.origin.value = Date.parse(view.createdAt);
      node.value = { ...prev, agent: view.agent, view, status, missing: false };
      for (const call of view.calls) {
        if (call.kind !== 'subagent' || !call.childId || this.nodes.has(call.childId)) continue;
        this.add({
          id: call.childId,
          agent: call.name,
          parentId: view.id,
          parentCallId: call.callId,
          depth: prev.depth + 1,
          texts: {},
        });
        this.reads.refresh(call.childId);
      }
      const sel = this.selected.value;
      if (sel.state === 'ok' && sel.sel.nodeId === view.id) {
        const call = view.calls.find((c) => c.callId === sel.sel.callId);
        if (call && call.status !== sel.detail.status) void this.loadDetail(sel.sel);
      }
    });
  }

  private onEvent(e: MeshEvent, type: string): void {
    let node = this.nodes.get(e.invocationId);
    if (!node) {
      // A node not yet seen in its parent's view: its parent's delegation (or the event) names it.
      const parent = e.parentId ? this.nodes.get(e.parentId) : undefined;
      if (!parent) return;
      node = this.add({
        id: e.invocationId,
        agent: e.agent,
        parentId: e.parentId!,
        ...(e.parentCallId ? { parentCallId: e.parentCallId } : {}),
        depth: parent.value.depth + 1,
        texts: {},
      });
      this.reads.refresh(e.invocationId);
    }
    const data = (e.data ?? {}) as Record<string, unknown>;
    const m = node.value;
    // A node whose view is terminal changes no more: a replayed event of it only brings text.
    const settled = m.view !== undefined && isTerminal(m.view.status);
    if (settled && type !== 'model_call') return;
    switch (type) {
      case 'status':
        if (typeof data.status === 'string') node.value = { ...m, status: data.status as InvocationStatus };
        break;
      case 'model_call':
        if (typeof data.callId === 'string') {
          const text = typeof data.content === 'string' ? data.content : '';
          if (m.texts[data.callId] !== text)
            node.value = { ...m, texts: { ...m.texts, [data.callId]: text } };
        }
        if (settled) return;
        break;
      case 'delta':
        if (typeof data.callId === 'string') {
          const before = data.reset === true ? '' : (m.texts[data.callId] ?? '');
          const add = typeof data.content === 'string' ? data.content : '';
          node.value = { ...m, texts: { ...m.texts, [data.callId]: before + add } };
        }
        return; // a delta changes no view
      case 'delegation_started':
        if (typeof data.childId === 'string' && !this.nodes.has(data.childId)) {
          this.add({
            id: data.childId,
            agent: typeof data.subagent === 'string' ? data.subagent : '',
            parentId: m.id,
            ...(typeof data.callId === 'string' ? { parentCallId: data.callId } : {}),
            depth: m.depth + 1,
            texts: {},
          });
          this.reads.refresh(data.childId);
        }
        break;
    }
    this.reads.refresh(e.invocationId);
  }

  /** After the stream ended: nodes not yet terminal are read until they are (a bounded while). */
  private settle(): void {
    for (const [id, node] of this.nodes)
      if (!node.value.status || !isTerminal(node.value.status)) this.reads.refresh(id);
  }

  private tick(): void {
    const open = [...this.nodes.values()].some((n) => !n.value.status || !isTerminal(n.value.status));
    if (open) this.now.value = Date.now();
    if (this.connection.value === 'ended' && open && this.polls++ < 120) this.settle();
    if (!open && this.connection.value === 'ended') clearInterval(this.ticker);
  }
}
