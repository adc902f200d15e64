/**
 * The mesh.yaml of the bench: one agent per figure, all on the fake model. Children take
 * `{input: string}`, as the SDK's `asTool()` does, so both sides send the model the same calls.
 * The `_json` agents use a second entry for the same model with `stream: false`: the round trips
 * as they were before the runners streamed (bench/figures/unwatched-round-trips.ts).
 */
export function benchConfig(modelUrl: string, depth: number): string {
  const input = '{type: object, properties: {input: {type: string}}, required: [input]}';
  const chain = Array.from({ length: depth + 1 }, (_, i) =>
    i < depth
      ? `  l${i}: {instructions: "@agent l${i}", subagents: [l${i + 1}]${i > 0 ? `, input: ${input}` : ''}}`
      : `  l${i}: {instructions: "@agent l${i}", input: ${input}}`,
  );
  return [
    'models:',
    `  default: {provider: openai, baseUrl: '${modelUrl}', apiKey: bench, model: fake}`,
    `  json: {provider: openai, baseUrl: '${modelUrl}', apiKey: bench, model: fake, stream: false}`,
    'tools: []',
    'agents:',
    '  single: {instructions: "@agent single"}',
    '  parent: {instructions: "@agent parent", subagents: [child]}',
    '  fan: {instructions: "@agent fan", subagents: [child]}',
    `  child: {instructions: "@agent child", input: ${input}}`,
    '  single_json: {instructions: "@agent single_json", model: json}',
    '  parent_json: {instructions: "@agent parent_json", model: json, subagents: [child_json]}',
    `  child_json: {instructions: "@agent child_json", model: json, input: ${input}}`,
    '  tokens: {instructions: "@agent tokens"}',
    '  burst: {instructions: "@agent burst"}',
    '  long: {instructions: "@agent long"}',
    '  slow: {instructions: "@agent slow"}',
    '  pparent: {instructions: "@agent pparent", subagents: [pchild]}',
    `  pchild: {instructions: "@agent pchild", input: ${input}}`,
    ...chain,
    '',
  ].join('\n');
}
