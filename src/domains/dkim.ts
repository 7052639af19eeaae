// DKIM keys (RFC 6376 §3.6.1): RSA-2048, published as `p=<base64 SubjectPublicKeyInfo>` under
// `<selector>._domainkey.<domain>`. The selector is Posthorn's own so a domain moving from Resend
// can keep Resend's `resend._domainkey` record while both are live (docs/api.md §9.7).
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';

export const DKIM_SELECTOR = 'posthorn';

const generate = promisify(generateKeyPair);

export async function generateDkimKey(): Promise<{ selector: string; private_key: string; public_key: string }> {
  const { privateKey, publicKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { selector: DKIM_SELECTOR, private_key: privateKey as unknown as string, public_key: (publicKey as unknown as Buffer).toString('base64') };
}

/** Tag-list of a DKIM key record (RFC 6376 §3.2), e.g. `v=DKIM1; k=rsa; p=MIIB…`. */
export function parseTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return tags;
}
