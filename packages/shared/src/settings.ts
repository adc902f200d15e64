// What a process reads before anything else (@agentmesh/shared/settings): its environment as the
// services read it, and its log format. No package outside Node is reachable from here
// (packages/shared/test/package.test.ts), so a launcher reads its settings without loading the
// package root's schemas: through tsx the root takes about 0.7 s to import, most of `npm start`'s
// wait before its first line.
export { type LogFormat, logFormat } from './log/log-format.js';
export { type ServiceEnv, serviceEnv } from './service-env.js';
