// ACME HTTP-01 (RFC 8555 §8.3): the challenge path the CA asks for.
import { Type } from '@sinclair/typebox';

/** A challenge token: base64url characters (RFC 8555 §8.1: at least 128 bits of entropy). */
export const AcmeChallengeParams = Type.Object({
  token: Type.String({ pattern: '^[A-Za-z0-9_-]{16,256}$', description: 'The challenge token', error: 'Not Found' }),
});
