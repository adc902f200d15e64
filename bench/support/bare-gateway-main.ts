// The gateway's part of a run with nothing but its hops, for the floor the mesh's round trips stand on
// (bare-pipeline.ts): `POST /invoke` writes the run to Redis, adds its BullMQ job, named for the agent
// of the body's `agent` (`single` unless it is `parent` or `fan`), without awaiting the write, as the gateway
// adds after its create, waits for the worker's PUBLISH and answers with what it carried. No
// validation, no records, no events.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import Fastify from 'fastify';
import { Redis } from 'ioredis';

const url = new URL(process.env.REDIS_URL!);
const prefix = process.env.BARE_PREFIX ?? 'bench-bare';
const connection = { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null };
const redis = new Redis(connection);
const subscriber = new Redis(connection);
const queue = new Queue('bare', { connection, prefix });
const waiting = new Map<string, (output: string) => void>();
subscriber.on('message', (_channel: string, message: string) => {
  const nl = message.indexOf('\n');
  const id = message.slice(0, nl);
  waiting.get(id)?.(message.slice(nl + 1));
  waiting.delete(id);
});
await subscriber.subscribe(`${prefix}:done`);
const app = Fastify();
app.post('/invoke', async (req) => {
  const id = randomUUID();
  const done = new Promise<string>((resolve) => waiting.set(id, resolve));
  // Sent without waiting before the add, as the gateway sends its create; a failed write fails the request.
  const written = redis.hset(`${prefix}:run:${id}`, 'status', 'queued', 'input', JSON.stringify(req.body));
  written.catch(() => undefined);
  const asked = (req.body as { agent?: unknown } | null)?.agent;
  const agent = asked === 'parent' || asked === 'fan' ? asked : 'single';
  await queue.add(agent, { id }, { jobId: id, removeOnComplete: true });
  await written;
  return { id, status: 'succeeded', output: await done };
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.on('disconnect', () => void app.close().finally(() => process.exit(0)));
process.send!({ url: address });
