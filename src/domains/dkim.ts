// DKIM keys (RFC 6376 §3.6.1): RSA-2048, published as `p=<base64 SubjectPublicKeyInfo>` under
// `<selector>._domainkey.<domain>`, and optionally Ed25519 beside it (RFC 8463: `k=ed25519;
// p=<base64 of the 32-byte key>`). The selector is Posthorn's own so a domain moving from Resend
// can keep Resend's `resend._domainkey` record while both are live (docs/api.md §9.7).
//
// Rotation without a restart (docs/mail.md §2.1): the next keys get new selectors and are shown as
// pending records; signing switches once every one of them verifies (the verifier completes the
// rotation in the unit of work that finds them); the retired selectors stay listed for a grace
// period — mail signed with them may still be verified later (forwarding, delayed checks) — after
// which they are safe to remove.
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import type { DkimKey, DkimRotation, DomainRec, RecordStatus, Store } from '../store';
import type { DkimDomain } from '../mail/dkim';
import type { DomainDkim } from '../schemas/domains';
import { errors } from '../errors';
import { nowIso } from '../ids';
import { putDomain, type DomainEventDeps } from './events';

export const DKIM_SELECTOR = 'posthorn';

const generate = promisify(generateKeyPair);

/** A new RSA-2048 key under `selector`. */
export async function generateDkimKey(selector = DKIM_SELECTOR): Promise<DkimKey> {
  const { privateKey, publicKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { selector, private_key: privateKey as unknown as string, public_key: (publicKey as unknown as Buffer).toString('base64') };
}

/** A new Ed25519 key under `selector`; the public key is the raw 32 bytes (RFC 8463 §4). */
export async function generateEd25519Key(selector: string): Promise<DkimKey> {
  const { privateKey, publicKey } = await generate('ed25519', {
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const spki = publicKey as unknown as Buffer;
  return { selector, private_key: privateKey as unknown as string, public_key: spki.subarray(spki.length - 32).toString('base64') };
}

/** The TXT value published for a key (RFC 6376 §3.6.1; RFC 8463 §4 for Ed25519). */
export function keyRecord(key: DkimKey, kind: 'rsa' | 'ed25519'): string {
  return kind === 'ed25519' ? `v=DKIM1; k=ed25519; p=${key.public_key}` : `p=${key.public_key}`;
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

/**
 * What signing uses of a domain: its RSA key, and its Ed25519 key while that key's record is
 * verified (a signature no receiver can check would only add a failed result).
 */
export function signingKeys(d: DomainRec): DkimDomain {
  const ed =
    d.dkim_ed25519 && d.record_status['DKIM:ed25519'] === 'verified'
      ? { selector: d.dkim_ed25519.selector, private_key: d.dkim_ed25519.private_key }
      : undefined;
  return { name: d.name, dkim: { selector: d.dkim.selector, private_key: d.dkim.private_key }, ...(ed ? { ed25519: ed } : {}) };
}

/** Selectors for a rotation started on `day`: `posthorn-YYYYMMDD` (and `-ed`), with a suffix when taken. */
function nextSelectors(d: DomainRec, at: Date): { rsa: string; ed25519: string } {
  const taken = new Set([d.dkim.selector, d.dkim_ed25519?.selector, ...(d.dkim_previous?.records.map((r) => r.selector) ?? [])]);
  const day = at.toISOString().slice(0, 10).replace(/-/g, '');
  for (let n = 1; ; n++) {
    const base = `${DKIM_SELECTOR}-${day}${n > 1 ? `-${n}` : ''}`;
    if (!taken.has(base) && !taken.has(`${base}-ed`)) return { rsa: base, ed25519: `${base}-ed` };
  }
}

/**
 * Start a rotation (POST /domains/{id}/dkim/rotate, `posthorn domains rotate-dkim`): new keys under
 * new selectors, pending until their records verify. One rotation at a time.
 */
export async function startRotation(store: Store, changes: DomainEventDeps, team: string, id: string, opts: { ed25519: boolean }): Promise<DomainRec> {
  const cur = await store.domains.get(team, id);
  if (!cur) throw errors.notFound('Domain');
  const names = nextSelectors(cur, new Date());
  const next: DkimRotation = {
    rsa: await generateDkimKey(names.rsa),
    ed25519: opts.ed25519 ? await generateEd25519Key(names.ed25519) : null,
    started_at: nowIso(),
  };
  return store.write(async (tx) => {
    const d = await tx.domains.get(team, id);
    if (!d) throw errors.notFound('Domain');
    if (d.capabilities.sending !== 'enabled') throw errors.validation('The domain does not send: there is no DKIM key to rotate.');
    if (d.dkim_next) throw errors.validation(`A DKIM rotation of \`${d.name}\` is already pending: publish its records and verify the domain.`);
    const record_status: Record<string, RecordStatus> = { ...d.record_status, 'DKIM:next': 'pending' };
    if (next.ed25519) record_status['DKIM:next-ed25519'] = 'pending';
    else delete record_status['DKIM:next-ed25519'];
    const updated: DomainRec = { ...d, dkim_next: next, record_status };
    await putDomain(changes, tx, d, updated);
    return updated;
  });
}

/** Is every record of the pending rotation verified? */
export function rotationVerified(d: DomainRec): boolean {
  if (!d.dkim_next) return false;
  return d.record_status['DKIM:next'] === 'verified' && (!d.dkim_next.ed25519 || d.record_status['DKIM:next-ed25519'] === 'verified');
}

/**
 * The switch, once the rotation's records verify: sign with the next keys from now on (mail still
 * queued included: it is signed at each attempt), and keep the retired selectors listed until
 * `graceMs` from now. Returns the domain as it is after.
 */
export function completeRotation(d: DomainRec, graceMs: number, now = Date.now()): DomainRec {
  const next = d.dkim_next!;
  const retired = [{ selector: d.dkim.selector, value: keyRecord(d.dkim, 'rsa') }];
  if (d.dkim_ed25519) retired.push({ selector: d.dkim_ed25519.selector, value: keyRecord(d.dkim_ed25519, 'ed25519') });
  const record_status = { ...d.record_status };
  for (const id of ['DKIM:next', 'DKIM:next-ed25519', 'DKIM:ed25519', 'DKIM:previous', 'DKIM:previous-ed25519']) delete record_status[id];
  record_status.DKIM = 'verified';
  if (next.ed25519) record_status['DKIM:ed25519'] = 'verified';
  record_status['DKIM:previous'] = d.record_status.DKIM ?? 'verified';
  if (d.dkim_ed25519) record_status['DKIM:previous-ed25519'] = d.record_status['DKIM:ed25519'] ?? 'verified';
  return {
    ...d,
    dkim: next.rsa,
    dkim_ed25519: next.ed25519,
    dkim_next: null,
    dkim_previous: { records: retired, retired_at: new Date(now).toISOString(), remove_after: new Date(now + graceMs).toISOString() },
    record_status,
  };
}

/** Are the retired selectors past their grace period? */
export function previousRemovable(d: DomainRec, now = Date.now()): boolean {
  return !!d.dkim_previous && now >= Date.parse(d.dkim_previous.remove_after);
}

/** The `dkim` object of GET /domains/{id} (docs/api.md §9.10). */
export function dkimView(d: DomainRec, now = Date.now()): DomainDkim {
  const algorithms = (ed: boolean) => (ed ? ['rsa-sha256', 'ed25519-sha256'] : ['rsa-sha256']);
  return {
    selector: d.dkim.selector,
    ed25519_selector: d.dkim_ed25519?.selector ?? null,
    algorithms: algorithms(!!d.dkim_ed25519 && d.record_status['DKIM:ed25519'] === 'verified'),
    rotation: d.dkim_next
      ? {
          status: 'pending' as const,
          selector: d.dkim_next.rsa.selector,
          ed25519_selector: d.dkim_next.ed25519?.selector ?? null,
          algorithms: algorithms(!!d.dkim_next.ed25519),
          started_at: d.dkim_next.started_at,
        }
      : null,
    previous: d.dkim_previous
      ? {
          selectors: d.dkim_previous.records.map((r) => r.selector),
          retired_at: d.dkim_previous.retired_at,
          remove_after: d.dkim_previous.remove_after,
          safe_to_remove: previousRemovable(d, now),
        }
      : null,
  };
}
