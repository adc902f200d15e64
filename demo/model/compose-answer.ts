import { fillSchema } from './fill-schema.js';
import type { DemoMessage } from './parse-chat-request.js';

/** Every final answer of the demo model starts with this label: it is scripted, not a language model. */
export const LABEL = '[offline demo model]';

const SCHEMA_PROMPT = 'The final response should be json format, and match the schema ';

interface ToolResult {
  name: string;
  args: Record<string, unknown>;
  content: string;
}

interface Hit {
  title?: unknown;
  excerpt?: unknown;
}

/**
 * The final answer to a conversation: the question, then what each tool call returned — quoted,
 * with document titles cited — as labelled text, or as JSON when a system message asks for a schema.
 */
export function composeAnswer(messages: DemoMessage[]): string {
  const question = messages.find((m) => m.role === 'user')?.content ?? '';
  const results = toolResults(messages);
  const titles = [...new Set(results.flatMap((r) => hitsOf(r).map((h) => String(h.title))))];
  const findings = results.map(describe);
  let text: string;
  if (findings.length === 0) {
    text = `${LABEL} I was given no tool results for "${question}", so I cannot answer it from sources. Point MODEL_BASE_URL at a real model for a real answer.`;
  } else if (findings.length === 1) {
    text = `${LABEL} ${findings[0]}`;
  } else {
    text = `${LABEL} Answer to "${question}", put together from ${findings.length} results:\n${findings.map((f) => `- ${f}`).join('\n')}`;
  }
  if (titles.length > 0) text += `\nSources: ${titles.join('; ')}.`;
  const schema = outputSchema(messages);
  return schema ? JSON.stringify(fillSchema(schema, { text, titles, count: results.length })) : text;
}

// Tool messages paired with the assistant tool call they answer, in the order they arrived.
function toolResults(messages: DemoMessage[]): ToolResult[] {
  const calls = new Map(messages.flatMap((m) => m.toolCalls.map((c) => [c.id, c] as const)));
  return messages
    .filter((m) => m.role === 'tool')
    .map((m) => {
      const call = calls.get(m.toolCallId ?? '');
      let args: Record<string, unknown> = {};
      try {
        args = JSON.parse(call?.arguments ?? '{}') as Record<string, unknown>;
      } catch {
        // the model's own arguments were not JSON: show the result without them
      }
      return { name: call?.name ?? 'a tool', args, content: m.content };
    });
}

function describe(r: ToolResult): string {
  // A failed call already reads as a sentence: "Tool x execute failed: ...", "Tool x does not exist."
  if (/^(?:Tool|Sub-agent) \S+ (?:execute failed|does not exist|was not approved)/.test(r.content))
    return r.content;
  const parsed = parseJson(r.content);
  if (r.name.startsWith('_subagent_')) {
    const who = r.name.slice('_subagent_'.length);
    const prompt = typeof r.args.prompt === 'string' ? r.args.prompt : undefined;
    const text = unlabel(flatten(parsed ?? r.content)).replace(`On "${prompt}", `, '');
    return `${who}${prompt === undefined ? '' : ` on "${prompt}"`}: ${text}`;
  }
  if (r.name === 'calculator' && isObject(parsed) && 'result' in parsed) {
    return `calculator: ${String(parsed.expression)} = ${String(parsed.result)}`;
  }
  if (r.name === 'search_docs' && Array.isArray(parsed)) {
    const hits = parsed as Hit[];
    const query = String(r.args.query ?? '');
    if (hits.length === 0) return `The documents hold nothing on "${query}".`;
    const [top, ...rest] = hits;
    const also =
      rest.length > 0 ? ` Also relevant: ${rest.map((h) => `"${String(h.title)}"`).join(', ')}.` : '';
    return `On "${query}", "${String(top!.title)}" says: "${String(top!.excerpt)}"${also}`;
  }
  const text = flatten(parsed ?? r.content);
  return `${r.name}: ${text.length > 400 ? `${text.slice(0, 400)} …` : text}`;
}

function hitsOf(r: ToolResult): Hit[] {
  const parsed = r.name === 'search_docs' ? parseJson(r.content) : undefined;
  return Array.isArray(parsed) ? (parsed as Hit[]).filter((h) => isObject(h) && 'title' in h) : [];
}

// A structured sub-agent output reads as `key: value; key: value`.
function flatten(value: unknown): string {
  if (typeof value === 'string') return value;
  if (isObject(value)) {
    return Object.entries(value)
      .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join('; ');
  }
  return JSON.stringify(value);
}

// A sub-agent's answer carries its own label (the parent's answer says it once) and fits on one line.
const unlabel = (text: string) =>
  text
    .replaceAll(`${LABEL} `, '')
    .replaceAll(LABEL, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim();

function outputSchema(messages: DemoMessage[]): Record<string, unknown> | undefined {
  const prompt = messages.find((m) => m.role !== 'tool' && m.content.includes(SCHEMA_PROMPT));
  if (!prompt) return undefined;
  const rest = prompt.content.slice(prompt.content.indexOf(SCHEMA_PROMPT) + SCHEMA_PROMPT.length);
  for (let end = rest.lastIndexOf('}'); end > 0; end = rest.lastIndexOf('}', end - 1)) {
    const schema = parseJson(rest.slice(0, end + 1));
    if (isObject(schema)) return schema;
  }
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
