// The demo mesh.yaml: it loads, and its agents fit together the way the demo needs.
import { fileURLToPath } from 'node:url';
import { loadConfig } from '@agentmesh/shared';
import t from 'tap';

const file = fileURLToPath(new URL('../mesh.yaml', import.meta.url));

t.test('mesh.yaml defaults to the offline demo model and the local tool-host', async (t) => {
  const config = await loadConfig(file, {});
  t.match(config.models.default, { baseUrl: 'http://127.0.0.1:3001/v1', apiKey: '', model: 'gpt-4o-mini' });
  t.equal(config.toolHost, 'http://127.0.0.1:3002');
  t.match(config.tools, [/demo\/tools\/index\.ts$/]);
});

t.test('the environment picks a real model and another tool-host', async (t) => {
  const env = {
    MODEL_BASE_URL: 'https://api.openai.com/v1',
    OPENAI_API_KEY: 'sk-x',
    MODEL: 'gpt-4o',
    TOOL_HOST_URL: 'http://th:1',
  };
  const config = await loadConfig(file, env);
  t.match(config.models.default, { baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-x', model: 'gpt-4o' });
  t.equal(config.toolHost, 'http://th:1');
});

t.test('the planner delegates to at least two sub-agents and can calculate', async (t) => {
  const { agents } = await loadConfig(file, {});
  t.match(agents.planner, { tools: ['calculator'] });
  t.ok((agents.planner?.subagents.length ?? 0) >= 2);
  for (const name of agents.planner?.subagents ?? []) {
    t.match(agents[name], { tools: ['search_docs'] }, `${name} searches the docs`);
    t.ok((agents[name]?.description ?? '').length > 20, `${name} has a description for the planner's model`);
  }
});
