// JSON responses in the documented content type; the body is remembered for the request log.
import { stateOf } from './context';
import type { ApiError } from '../../errors';

const CONTENT_TYPE = 'application/json; charset=utf-8';

export function jsonResponse(req: Request | null, status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const s = req ? stateOf(req) : undefined;
  const text = JSON.stringify(body);
  if (s) s.responseJson = text;
  return new Response(text, { status, headers: { 'content-type': CONTENT_TYPE, ...headers } });
}

export function errorResponse(req: Request | null, err: ApiError): Response {
  return jsonResponse(req, err.statusCode, err.toJSON(), err.headers);
}
