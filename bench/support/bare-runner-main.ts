// The runner's part of a run with nothing but its hops (bare-pipeline.ts): a BullMQ worker that takes
// each job, asks the fake model as the single agent (one Chat Completions request, undici), writes the
// answer to Redis and publishes it to the gateway in one round trip. No activation, records, events
// or streaming.
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { request } from 'undici';

const url = new URL(process.env.REDIS_URL!);
const connection = { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null };
const redis = new Redis(connection);
const model = `${process.env.MODEL_URL!.replace(/\/$/, '')}/chat/completions`;
const body = JSON.stringify({
  model: 'fake',
  messages: [
    { role: 'system', content: '@agent single' },
    { role: 'user', content: 'go' },
  ],
});
const worker = new Worker(
  'bare',
  async (job) => {
    const res = await request(model, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const reply = (await res.body.json()) as { choices: { message: { content: string } }[] };
    const output = reply.choices[0]!.message.content;
    const id = job.data.id as string;
    await redis
      .multi()
      .hset(`bench-bare:run:${id}`, 'status', 'succeeded', 'output', output)
      .expire(`bench-bare:run:${id}`, 60)
      .publish('bench-bare:done', `${id}\n${output}`)
      .exec();
    return 'ok';
  },
  { connection, prefix: 'bench-bare', concurrency: 256 },
);
await worker.waitUntilReady();
process.on('disconnect', () => void worker.close().finally(() => process.exit(0)));
process.send!({ ready: true });
