// Svix / Standard Webhooks signing (docs/api.md §14.5): event ids `msg_…`, secrets `whsec_…`,
// and the signature headers of one attempt. HMAC from node:crypto, nothing home-made.
import { createHmac, randomBytes } from 'node:crypto';

/** Base62 in ASCII order, so fixed-width encodings sort like the numbers they encode. */
const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const MSG_ID_RE = /^msg_[0-9A-Za-z]{27}$/;

/**
 * A webhook event id: `msg_` + 27 base62 chars encoding 20 bytes, KSUID-style — here a UUIDv7
 * (48-bit millisecond time first, monotonic within the process) followed by 4 random bytes. The
 * ids sort by creation time, so they serve as LMDB keys and pagination cursors.
 */
export function newMsgId(): string {
  let n = BigInt(`0x${Bun.randomUUIDv7().replaceAll('-', '')}${randomBytes(4).toString('hex')}`);
  let out = '';
  for (let i = 0; i < 27; i++) {
    out = B62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return `msg_${out}`;
}

export function isMsgId(text: unknown): boolean {
  return typeof text === 'string' && MSG_ID_RE.test(text);
}

/** `whsec_` + 24 random bytes in base64 (32 chars). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** `v1,<base64 HMAC-SHA256>` of `${id}.${timestamp}.${body}`, keyed by the decoded secret. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * The headers of one attempt: `svix-*` and the same values under the Standard Webhooks names
 * `webhook-*`. Every live secret signs (two during the 24 h after a rotation), space-separated.
 */
export function signedHeaders(secrets: string[], id: string, timestamp: number, body: string): Record<string, string> {
  const signature = secrets.map((s) => sign(s, id, timestamp, body)).join(' ');
  const ts = String(timestamp);
  return {
    'svix-id': id,
    'svix-timestamp': ts,
    'svix-signature': signature,
    'webhook-id': id,
    'webhook-timestamp': ts,
    'webhook-signature': signature,
  };
}
