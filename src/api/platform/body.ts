// Request bodies: JSON only, at most 50 MB (docs/api.md §1.4). An empty body is "no body", never
// a parse error (the SDK sends Content-Type: application/json on bodiless requests).
import { errors } from '../../errors';
import { readBounded } from '../../net/stream';

export const MAX_BODY_BYTES = 50 * 1024 * 1024;
/**
 * Deepest nesting of arrays and objects a body may have (the body itself is level 1). Resend's
 * bodies go four levels deep; JSON.parse takes a million, but the walks of the parsed body (the
 * request log's redaction, the idempotency fingerprint) recurse and run out of stack past a few
 * thousand — a 500, or a 400 that called valid JSON invalid.
 */
export const MAX_BODY_DEPTH = 64;

/** Read and parse a JSON body; undefined when the body is empty. */
export async function readJson(req: Request): Promise<unknown> {
  return (await readJsonText(req))?.body;
}

/** A JSON body and its text as received (the request log keeps the text); undefined when empty. */
export async function readJsonText(req: Request): Promise<{ body: unknown; text: string } | undefined> {
  const declared = req.headers.get('content-length');
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw errors.tooLarge();
  let text: string;
  if (declared !== null) text = await req.text();
  else text = await readLimited(req);
  if (text.length > MAX_BODY_BYTES) throw errors.tooLarge();
  if (text.trim() === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw errors.badJson();
  }
  if (deeperThan(body, MAX_BODY_DEPTH)) throw errors.badJson(`The request body is nested too deeply: at most ${MAX_BODY_DEPTH} levels of arrays and objects.`);
  return { body, text };
}

/** Does `value` nest arrays and objects more than `max` levels deep? Walked with a list, not recursion. */
function deeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length) {
    const [v, depth] = pending.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
  }
  return false;
}

/** Chunked bodies carry no length: count while reading and stop at the limit. */
async function readLimited(req: Request): Promise<string> {
  const bytes = await readBounded(req.body, MAX_BODY_BYTES);
  if (!bytes) throw errors.tooLarge();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * A JSON object body, for routes that check their fields by hand; another top-level type is the
 * 400 of docs/api.md §1.4, and no body reads as `{}` (every field missing).
 */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw errors.badJson('The request body must be a JSON object.');
  return body as Record<string, unknown>;
}
