import type http from 'node:http';

/** The parts of a `chat.completion` a stream is made of. */
interface Completion {
  id: string;
  created: number;
  model: string;
  system_fingerprint: string;
  choices: {
    message: {
      content: string | null;
      tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
    };
    finish_reason: string;
  }[];
  usage: unknown;
}

/** Characters of a tool call's arguments per chunk. */
const ARGUMENT_PIECE_CHARS = 16;

/** Text cut after each run of spaces: the pieces a model streams (about a word each). */
export function wordsOf(text: string): string[] {
  return text.match(/\S*\s*/g)?.filter((w) => w !== '') ?? [];
}

/**
 * Writes a completion as OpenAI streams it: Server-Sent Events of `chat.completion.chunk`s (the
 * role, the content word by word, each tool call's id and name then its arguments 16 characters at a time, a
 * chunk with the finish_reason, with `includeUsage` one with the usage and no choices), then
 * `data: [DONE]`. Pieces go `chunkDelayMs` apart; a client that leaves stops it.
 */
export async function streamCompletion(
  res: http.ServerResponse,
  answer: Completion,
  opts: { includeUsage: boolean; chunkDelayMs: number },
): Promise<void> {
  const head = {
    id: answer.id,
    object: 'chat.completion.chunk',
    created: answer.created,
    model: answer.model,
    system_fingerprint: answer.system_fingerprint,
  };
  const chunk = (delta: unknown, finish: string | null = null) => ({
    ...head,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const choice = answer.choices[0]!;
  const { content, tool_calls: calls = [] } = choice.message;
  const events: unknown[] = [
    chunk({ role: 'assistant', content: content === null ? null : '', refusal: null }),
  ];
  for (const word of wordsOf(content ?? '')) events.push(chunk({ content: word }));
  calls.forEach((c, index) => {
    events.push(
      chunk({
        tool_calls: [
          { index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } },
        ],
      }),
    );
    const args = c.function.arguments;
    for (let at = 0; at < args.length; at += ARGUMENT_PIECE_CHARS) {
      const piece = args.slice(at, at + ARGUMENT_PIECE_CHARS);
      events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  events.push(chunk({}, choice.finish_reason));
  if (opts.includeUsage) events.push({ ...head, choices: [], usage: answer.usage });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) {
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(event)}\n\n`);
    if (opts.chunkDelayMs > 0) await new Promise((r) => setTimeout(r, opts.chunkDelayMs));
  }
  res.end('data: [DONE]\n\n');
}
