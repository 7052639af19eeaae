// JSON responses in the documented content type; the body is remembered for the request log.
import { stateOf } from './context';
import type { ApiError } from '../../errors';

const CONTENT_TYPE = 'application/json; charset=utf-8';

export function jsonResponse(req: Request | null, status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const s = req ? stateOf(req) : undefined;
  const text = JSON.stringify(body);
  if (!s) return new Response(text, { status, headers: { 'content-type': CONTENT_TYPE, ...headers } });
  s.responseJson = text;
  // The server's headers go in now, with the others: set one by one on the made response they cost
  // more (each set goes through the response's Headers object).
  const res = new Response(text, { status, headers: { 'content-type': CONTENT_TYPE, ...headers, ...s.responseHeaders } });
  if (s.responseHeaders) s.headersIn = res;
  return res;
}

export function errorResponse(req: Request | null, err: ApiError): Response {
  return jsonResponse(req, err.statusCode, err.toJSON(), err.headers);
}
