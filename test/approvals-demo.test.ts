// The demo's approval (docs/guides/approvals-and-budgets.md): the publisher's publish_note needs a human's approval,
// and the offline demo model calls it for any prompt and reports a rejection in its answer.
import { fileURLToPath } from 'node:url';
import { buildPlan, loadConfig } from '@agentmesh/shared';
import { loadToolDefinitions } from '@agentmesh/tool-host';
import t from 'tap';
import { startDemoModel } from '../demo/model/demo-model.js';
import * as demoTools from '../demo/tools/index.js';

const file = fileURLToPath(new URL('../mesh.yaml', import.meta.url));

t.test("mesh.yaml's publisher waits for approval of every publish_note", async (t) => {
  const config = await loadConfig(file, {});
  const tools = loadToolDefinitions(Object.values(demoTools)).map((x) => x.info);
  t.match(
    tools.find((x) => x.name === 'publish_note'),
    { needsApproval: true },
  );
  const plan = buildPlan(config, { tools });
  t.same(plan.agents.publisher?.approvals, ['publish_note']);
  t.notOk(plan.agents.planner?.approvals, 'the planner needs none');
});

t.test('the demo model publishes, then reports the rejection it was given', async (t) => {
  const model = await startDemoModel({ port: 0 });
  t.teardown(() => model.close());
  const tool = {
    type: 'function',
    function: { name: 'publish_note', description: 'Publishes.', parameters: { type: 'object' } },
  };
  const chat = async (messages: unknown[]) =>
    (await (
      await fetch(`${model.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages, tools: [tool] }),
      })
    ).json()) as { choices: { message: { content: string | null; tool_calls?: any[] } }[] };
  const user = { role: 'user', content: 'Redis AOF is on from Monday. Tell the team.' };
  const first = (await chat([user])).choices[0]!.message;
  t.equal(first.tool_calls?.[0]?.function.name, 'publish_note');
  t.same(JSON.parse(first.tool_calls![0].function.arguments), {
    title: 'Redis AOF is on from Monday',
    text: user.content,
  });
  const rejected = 'Tool publish_note was not approved: wrong week';
  const second = (
    await chat([
      user,
      { role: 'assistant', content: null, tool_calls: first.tool_calls },
      { role: 'tool', tool_call_id: first.tool_calls![0].id, content: rejected },
    ])
  ).choices[0]!.message;
  t.match(second.content, rejected);
});
