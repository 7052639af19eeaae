// Request bodies: JSON only, at most 50 MB (docs/api.md §1.4). An empty body is "no body", never
// a parse error (the SDK sends Content-Type: application/json on bodiless requests).
import { errors } from '../../errors';
import { readBounded } from '../../net/stream';
import { StreamedJson, type LargeBody } from './streamed-json';

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

/**
 * Bodies past this size, on a route that declares where its attachments are (route.ts
 * `largeBody`), are parsed as they arrive (streamed-json.ts): a 5 MB file's 7 MB of JSON is then
 * never held whole beside its text and its parsed string (issue 38's memory goal).
 */
export const STREAM_FROM_BYTES = 1024 * 1024;
/** A streamed body is decoded and parsed in slices of this much, the event loop let go between. */
const SLICE_BYTES = 256 * 1024;

/**
 * A JSON body and its text as received (the request log keeps the text); undefined when empty.
 * A large body of a `largeBody` route comes without its text.
 */
export async function readJsonText(req: Request, largeBody?: LargeBody): Promise<{ body: unknown; text?: string } | undefined> {
  const declared = req.headers.get('content-length');
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw errors.tooLarge();
  if (largeBody && (declared === null || Number(declared) > STREAM_FROM_BYTES)) return readStreamed(req, largeBody, declared !== null);
  let text: string;
  if (declared !== null) text = await req.text();
  else text = await readLimited(req);
  return parseText(text);
}

function parseText(text: string): { body: unknown; text: string } | undefined {
  if (text.length > MAX_BODY_BYTES) throw errors.tooLarge();
  if (text.trim() === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw errors.badJson();
  }
  if (deeperThan(body, MAX_BODY_DEPTH)) throw tooDeep();
  return { body, text };
}

/** How JSON.stringify writes a Node Buffer (no spaces): the start of such an attachment. */
const BUFFER_JSON = '{"type":"Buffer","data":[';

const tooDeep = () => errors.badJson(`The request body is nested too deeply: at most ${MAX_BODY_DEPTH} levels of arrays and objects.`);

/**
 * A body read as it arrives: one that ends within STREAM_FROM_BYTES is parsed whole as above; past
 * it, piece by piece (streamed-json.ts), to the same value and the same answers — 413 past 50 MB
 * first (the rest is still counted after a syntax error), then bad JSON, then the nesting. The
 * text is decoded as `req.text()` decodes it (`declared`: a byte order mark dropped) or as a
 * chunked body is (kept, and refused by the parser as JSON.parse refuses it).
 */
async function readStreamed(req: Request, where: LargeBody, declared: boolean): Promise<{ body: unknown } | undefined> {
  if (!req.body) return parseText('');
  const reader = req.body.getReader();
  const head: Uint8Array[] = [];
  let size = 0;
  // An attachment sent as a Node Buffer in JSON (docs/api.md §2 item 16, SDKs before 6.37) is an
  // array of numbers: the streamed parser reads it number by number, five times slower than
  // JSON.parse and larger in memory (a 10 MB file: 33 s and 774 MB peak for six, against 6 s and
  // 445 MB). A body showing one in its first STREAM_FROM_BYTES is read whole instead.
  let whole = false;
  const next = async () => {
    const r = await reader.read();
    if (r.done) return null;
    size += r.value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw errors.tooLarge();
    }
    return r.value;
  };
  for (let chunk = await next(); ; chunk = await next()) {
    if (!chunk) {
      const bytes = Buffer.concat(head, size);
      return parseText(declared ? new TextDecoder().decode(bytes) : bytes.toString('utf8'));
    }
    head.push(chunk);
    if (size > STREAM_FROM_BYTES && !whole) {
      if (!Buffer.concat(head, size).includes(BUFFER_JSON)) break;
      whole = true;
    }
  }
  const decoder = new TextDecoder('utf-8', { ignoreBOM: !declared });
  // Characters are at most bytes: what the declared length leaves after the bytes written bounds
  // the length of an attachment starting in the next slice (its decoded bytes get one buffer).
  const length = Number(req.headers.get('content-length'));
  let fed = 0;
  const json = new StreamedJson(where, MAX_BODY_DEPTH, declared ? () => Math.max(0, length - fed) : undefined);
  const write = async (chunk: Uint8Array) => {
    for (let at = 0; at < chunk.byteLength; at += SLICE_BYTES) {
      const slice = chunk.subarray(at, at + SLICE_BYTES);
      json.write(decoder.decode(slice, { stream: true }));
      fed += slice.byteLength;
      // Other requests (and GET /health) get their turn between slices.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  for (const chunk of head.splice(0)) await write(chunk);
  for (let chunk = await next(); chunk; chunk = await next()) await write(chunk);
  json.write(decoder.decode());
  const body = json.end();
  if (body === undefined) return undefined;
  if (json.tooDeep) throw tooDeep();
  return { body };
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
