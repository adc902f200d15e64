// The Redis side of agentmesh (@agentmesh/shared/redis): connections, the stores that read and write
// through them, and the Lua steps they run. The pure core is the package root (index.ts).
export * from './redis/index.js';
export { cancelTree, type FlaggedNode } from './store/cancel-tree.js';
export { type Catalogue, readCatalogue, waitForCatalogue } from './store/catalogue.js';
export { APPROVAL_WAKE_PREFIX, DONE_MESSAGE_MAX_BYTES } from './store/done-channel.js';
export { finishArgs, type Outcome } from './store/finish-args.js';
export * from './store/lua-steps.js';
export { type MeshScripts, meshScripts } from './store/mesh-scripts.js';
export { readInvocation } from './store/read-invocation.js';
export * from './store/session-settle.js';
export * from './store/session-store.js';
