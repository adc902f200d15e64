/**
 * The mesh.yaml of the bench: one agent per figure, all on the fake model. Children take
 * `{input: string}`, as the SDK's `asTool()` does, so both sides send the model the same calls.
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
    'tools: []',
    'agents:',
    '  single: {instructions: "@agent single"}',
    '  parent: {instructions: "@agent parent", subagents: [child]}',
    '  fan: {instructions: "@agent fan", subagents: [child]}',
    `  child: {instructions: "@agent child", input: ${input}}`,
    '  slow: {instructions: "@agent slow"}',
    '  pparent: {instructions: "@agent pparent", subagents: [pchild]}',
    `  pchild: {instructions: "@agent pchild", input: ${input}}`,
    ...chain,
    '',
  ].join('\n');
}
