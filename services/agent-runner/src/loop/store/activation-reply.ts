import { decodeCalls, decodeInvocation } from '@agentmesh/shared';
import type { Activation } from './activation.js';
import { pairs } from './activation-args.js';

/**
 * ACTIVATE's reply: epoch, recovered (0/1), state and call records as flat lists, the call it
 * started, and whether the tree's deltas are watched (0/1).
 */
export type ActivateReply = [number, number, string[], string[], string, number];

/** The activation ACTIVATE answered (its own step, or the take's); undefined when it is gone. */
export function activationOf(res: ActivateReply | null): Activation | undefined {
  if (!res) return undefined;
  const [epoch, recovered, stateFlat, callsFlat, prestarted, watched] = res;
  const records = new Map(decodeCalls(pairs(callsFlat)).map((r) => [r.callId, r]));
  const state = decodeInvocation(pairs(stateFlat));
  const activation: Activation = {
    epoch,
    recovered: recovered === 1,
    state,
    records,
    watched: watched === 1,
  };
  if (prestarted) activation.prestarted = prestarted;
  return activation;
}
