// The runner's part of a run with nothing but its hops (bare-pipeline.ts): a BullMQ worker that takes
// each job and asks the fake model as the agent the job names (one Chat Completions request, undici).
// A `single` run writes the answer to Redis and publishes it to the gateway in one round trip. A
// `parent` run delegates once as the mesh's step jobs do, in stock BullMQ steps: its first step asks the
// model, adds a `child` job whose parent it is and parks until the child completes, holding no slot;
// the child asks the model and completes with the answer; BullMQ's completion of the child moves the
// parent back to waiting, and the parent's second step reads the answer, asks the model again with it
// and answers as `single` does. A `fan` run does the same with the 8 calls its model asks for: its
// children go out in one write and run side by side. No activation, records, events or streaming.
import { Queue, WaitingChildrenError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { request } from 'undici';

const url = new URL(process.env.REDIS_URL!);
const prefix = process.env.BARE_PREFIX ?? 'bench-bare';
const connection = { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null };
const redis = new Redis(connection);
const model = `${process.env.MODEL_URL!.replace(/\/$/, '')}/chat/completions`;
const queue = new Queue('bare', { connection: redis, prefix });

interface Message {
  role: string;
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}
interface Reply {
  choices: { message: Message }[];
}

const ask = async (agent: string, more: Message[] = []): Promise<Message> => {
  const messages = [{ role: 'system', content: `@agent ${agent}` }, { role: 'user', content: 'go' }, ...more];
  const res = await request(model, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fake', messages }),
  });
  return ((await res.body.json()) as Reply).choices[0]!.message;
};

const answer = (id: string, output: string) =>
  redis
    .multi()
    .hset(`${prefix}:run:${id}`, 'status', 'succeeded', 'output', output)
    .expire(`${prefix}:run:${id}`, 60)
    .publish(`${prefix}:done`, `${id}\n${output}`)
    .exec();

const worker = new Worker(
  'bare',
  async (job, token) => {
    const id = job.data.id as string;
    const childId = (i: number) => `${id}-child-${i}`;
    if (job.name === 'child') return (await ask('child')).content;
    if (job.name !== 'parent' && job.name !== 'fan') {
      await answer(id, (await ask('single')).content ?? '');
      return 'ok';
    }
    if (job.data.calls === undefined) {
      const calls = (await ask(job.name)).tool_calls!;
      const parent = { id: job.id!, queue: job.queueQualifiedName };
      // The step's state, the children and the park go out together, in this order, on one connection.
      const [, , parked] = await Promise.all([
        job.updateData({ ...job.data, calls }),
        queue.addBulk(
          calls.map((_, i) => ({
            name: 'child',
            data: { id: childId(i) },
            opts: { jobId: childId(i), parent, removeOnComplete: true },
          })),
        ),
        job.moveToWaitingChildren(token!),
      ]);
      if (parked) throw new WaitingChildrenError();
    }
    const calls = job.data.calls as NonNullable<Message['tool_calls']>;
    // Keyed by each child's job key: its queue's (the parent's) and its id.
    const values = (await job.getChildrenValues()) as Record<string, string | undefined>;
    const final = await ask(job.name, [
      { role: 'assistant', content: null, tool_calls: calls },
      ...calls.map((call, i) => ({
        role: 'tool',
        tool_call_id: call.id,
        content: values[`${job.queueQualifiedName}:${childId(i)}`] ?? '',
      })),
    ]);
    await answer(id, final.content ?? '');
    return 'ok';
  },
  { connection: redis, prefix, concurrency: 256 },
);
await worker.waitUntilReady();
process.on('disconnect', () => void worker.close().finally(() => process.exit(0)));
process.send!({ ready: true });
