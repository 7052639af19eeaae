// Request bodies: JSON only, at most 50 MB (docs/api.md §1.4). An empty body is "no body", never
// a parse error (the SDK sends Content-Type: application/json on bodiless requests).
import { errors } from '../../errors';
import { readBounded } from '../../net/stream';

export const MAX_BODY_BYTES = 50 * 1024 * 1024;

/** Read and parse a JSON body; undefined when the body is empty. */
export async function readJson(req: Request): Promise<unknown> {
  const declared = req.headers.get('content-length');
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw errors.tooLarge();
  let text: string;
  if (declared !== null) text = await req.text();
  else text = await readLimited(req);
  if (text.length > MAX_BODY_BYTES) throw errors.tooLarge();
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw errors.badJson();
  }
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
