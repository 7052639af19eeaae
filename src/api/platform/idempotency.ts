// The `Idempotency-Key` header of POST /emails and /emails/batch (docs/api.md §5). Its format is
// checked before the body is read; the rules themselves live with the sending core
// (src/sending/idempotency.ts), shared with SMTP's `Resend-Idempotency-Key`.
import { checkIdempotencyKey } from '../../sending/idempotency';

export const IDEMPOTENT_ROUTES = new Set(['POST /emails', 'POST /emails/batch']);

/** The request's key, or null; throws 400 invalid_idempotency_key when malformed. */
export function idempotencyKey(headers: Headers): string | null {
  return checkIdempotencyKey(headers.get('idempotency-key'), 'Idempotency-Key');
}
