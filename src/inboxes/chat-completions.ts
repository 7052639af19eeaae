// The operator's model, asked through the OpenAI-compatible chat-completions protocol
// (`POST <agent.url>/chat/completions`, docs/api.md §25.10): what Ollama, llama.cpp's server, vLLM
// and the hosted APIs speak. One request per agent run, bounded by `agent.timeout_ms`.
//
// A request never throws: the endpoint down, slow, or answering an error or no text gives an
// answer that says so (`ok: false`, and why), which the run records. The endpoint is the
// operator's own (often on loopback or the private network), so it is fetched as configured, not
// through net/guard.ts, which is for addresses that clients give.

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Why a request has no answer: it took longer than the timeout, the endpoint could not be reached, or it answered an error or nonsense. */
export type ChatFailure = 'timeout' | 'unreachable' | 'error';

export type ChatAnswer =
  | { ok: true; content: string; prompt_tokens: number | null; completion_tokens: number | null }
  | { ok: false; failure: ChatFailure; error: string };

export interface ChatOptions {
  /** The API's base URL (`agent.url`): the request goes to `<url>/chat/completions`. */
  url: string;
  model: string;
  apiKey: string | null;
  timeoutMs: number;
}

/** The most characters of an error answer kept in a run's record. */
const ERROR_TEXT = 300;

export class ChatCompletions {
  constructor(private readonly opts: ChatOptions) {}

  /** The model's answer to `messages`, asked for as one JSON object (`response_format`). */
  async complete(messages: ChatMessage[]): Promise<ChatAnswer> {
    const { url, model, apiKey, timeoutMs } = this.opts;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const body = JSON.stringify({ model, messages, temperature: 0.2, stream: false, response_format: { type: 'json_object' } });
    const signal = AbortSignal.timeout(timeoutMs);
    const timedOut = (e: unknown) => (e as Error)?.name === 'TimeoutError' || (e as Error)?.name === 'AbortError';
    let res: Response;
    try {
      res = await fetch(`${url}/chat/completions`, { method: 'POST', headers, body, signal });
    } catch (e) {
      if (timedOut(e)) return { ok: false, failure: 'timeout', error: `the model did not answer within ${timeoutMs} ms (agent.timeout_ms)` };
      return { ok: false, failure: 'unreachable', error: `${url} cannot be reached: ${(e as Error)?.message ?? e}` };
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      if (timedOut(e)) return { ok: false, failure: 'timeout', error: `the model did not answer within ${timeoutMs} ms (agent.timeout_ms)` };
      return { ok: false, failure: 'error', error: `the answer could not be read: ${(e as Error)?.message ?? e}` };
    }
    if (!res.ok) return { ok: false, failure: 'error', error: `${url}/chat/completions answered ${res.status}: ${text.slice(0, ERROR_TEXT)}` };
    return readAnswer(text);
  }
}

/** A chat-completions answer's text (the first choice's message) and token counts. */
export function readAnswer(text: string): ChatAnswer {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return { ok: false, failure: 'error', error: `the endpoint answered without JSON: ${text.slice(0, ERROR_TEXT)}` };
  }
  const a = answer as { choices?: { message?: { content?: unknown } }[]; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } };
  const content = a?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') return { ok: false, failure: 'error', error: 'the answer has no choices[0].message.content' };
  const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
  return { ok: true, content, prompt_tokens: count(a.usage?.prompt_tokens), completion_tokens: count(a.usage?.completion_tokens) };
}
