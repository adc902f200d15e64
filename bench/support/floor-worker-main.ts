// A bare BullMQ worker as its own process, for the floor of one queue hop: it answers every job of
// queue `floor` (prefix `bench-floor`, away from the mesh's keys) at once, with concurrency 1.
import { Worker } from 'bullmq';

const url = new URL(process.env.REDIS_URL!);
const worker = new Worker('floor', async () => 'ok', {
  connection: { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null },
  prefix: 'bench-floor',
  concurrency: 1,
});
await worker.waitUntilReady();
process.on('disconnect', () => void worker.close().finally(() => process.exit(0)));
process.send!({ ready: true });
