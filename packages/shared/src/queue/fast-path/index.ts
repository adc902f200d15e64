/**
 * The queue fast path's shared part: BullMQ's own Lua steps, read from the installed package and
 * changed where the mesh saves a round trip or a wake-up (docs/architecture/queue-fast-path.md).
 * The gateway's entry point (its dispatching add) and what the runner's fast path builds on
 * (services/agent-runner/src/queue/fast-path). Imported only when MESH_QUEUE_FASTPATH is on, on
 * one Redis server: with it off, no BullMQ step is read, changed or defined by the mesh.
 */
export { BULLMQ_VERSION, type BullScript, bullmqScript } from './bullmq-script.js';
export {
  changeScript,
  fastPathLua,
  MOVE_TO_ACTIVE,
  MOVE_TO_ACTIVE_KEYS,
  type ScriptChange,
  TAKE_CHANGES,
  TAKE_MARK,
  TAKE_PRELUDE,
  takeStepLua,
} from './take-step.js';
