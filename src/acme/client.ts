// Asking the CA for a certificate, with acme-client (a maintained RFC 8555 client, not a
// hand-written protocol): the account (made once per directory, its key kept in the store), an
// order for the names, HTTP-01 challenges answered from the store by whichever node the CA
// reaches (api/resources/acme.ts), the CSR with a fresh key, the chain.
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import type * as AcmeClient from 'acme-client';
import type { Config } from '../config';
import { nowIso } from '../ids';
import { log } from '../log';
import { challengeId } from './names';
import { ACME_TEAM, type AcmeAccountRec, type AcmeChallengeRec, type Store } from '../store';

export interface IssuedCertificate {
  key: string;
  cert: string;
}

export interface AcmeClientDeps {
  store: Store;
  config: Pick<Config, 'tls'>;
}

/**
 * acme-client and its HTTP client, loaded on first use: a Posthorn without ACME, and one whose
 * certificate is not due, never holds them.
 */
let loaded: Promise<typeof AcmeClient> | null = null;
const acmeClient = () => (loaded ??= import('acme-client'));

/**
 * acme-client talks through one axios instance: the directory's HTTPS trusts the system's CAs and
 * `tls.acme.ca_file` (a private CA; pebble's in tests). Set once per process, for its one directory.
 */
function trustDirectory(acme: typeof AcmeClient, caFile: string | null): void {
  if (!caFile) return;
  acme.axios.defaults.httpsAgent = new Agent({ ca: [...rootCertificates, readFileSync(caFile, 'utf8')] });
}

/** The account of this directory, made (and kept) on first use. */
async function account(acme: typeof AcmeClient, deps: AcmeClientDeps): Promise<AcmeAccountRec> {
  const { directory } = deps.config.tls.acme;
  const found = (await deps.store.acme.get(ACME_TEAM, 'account')) as AcmeAccountRec | undefined;
  if (found && found.directory === directory) return found;
  const rec: AcmeAccountRec = {
    id: 'account',
    team_id: ACME_TEAM,
    created_at: nowIso(),
    kind: 'account',
    directory,
    key: (await acme.crypto.createPrivateEcdsaKey('P-256')).toString(),
    url: null,
  };
  await deps.store.write(async (tx) => tx.acme.put(rec));
  return rec;
}

/**
 * A certificate for `names` (the first is its subject), through HTTP-01 (RFC 8555 §7.4, §8.3).
 * Throws what the CA said. The steps are acme-client's Client methods in the order of its own
 * `auto()`, which is not used: it reads the CSR back with @peculiar/x509, whose ASN.1 schemas are
 * installed twice in this tree (asn1-schema 2.8.0 beside asn1-csr's 2.11.1) and do not meet
 * ("Cannot get schema for 'CertificationRequest'"); the CSR is made with acme-client's node-forge
 * interface for the same reason.
 */
export async function requestCertificate(deps: AcmeClientDeps, names: string[]): Promise<IssuedCertificate> {
  const acme = await acmeClient();
  const settings = deps.config.tls.acme;
  trustDirectory(acme, settings.ca_file);
  const acct = await account(acme, deps);
  const client = new acme.Client({ directoryUrl: settings.directory, accountKey: acct.key, ...(acct.url ? { accountUrl: acct.url } : {}) });
  if (!acct.url) {
    await client.createAccount({ termsOfServiceAgreed: settings.terms_agreed, ...(settings.email ? { contact: [`mailto:${settings.email}`] } : {}) });
    const url = client.getAccountUrl();
    await deps.store.write(async (tx) => tx.acme.put({ ...acct, url }));
    log.info('acme.account_created', { directory: settings.directory, url });
  }
  const order = await client.createOrder({ identifiers: names.map((value) => ({ type: 'dns', value })) });
  const authorizations = await client.getAuthorizations(order);
  await Promise.all(
    authorizations.map(async (authz) => {
      if (authz.status === 'valid') return;
      const challenge = authz.challenges.find((c) => c.type === 'http-01');
      if (!challenge) throw new Error(`the CA offers no HTTP-01 challenge for ${authz.identifier.value}`);
      const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
      const rec: AcmeChallengeRec = {
        id: challengeId(challenge.token),
        team_id: ACME_TEAM,
        created_at: nowIso(),
        kind: 'challenge',
        token: challenge.token,
        key_authorization: keyAuthorization,
      };
      await deps.store.write(async (tx) => tx.acme.put(rec));
      try {
        await client.completeChallenge(challenge);
        await client.waitForValidStatus(challenge);
      } catch (e) {
        throw new Error(`${authz.identifier.value}: ${(e as Error).message}`);
      } finally {
        await deps.store.write(async (tx) => tx.acme.remove(ACME_TEAM, rec.id)).catch(() => {});
      }
    }),
  );
  // RSA 2048: the key every SMTP client and server still in use can speak (ECDSA is not yet universal among MTAs).
  const [key, csr] = await acme.forge.createCsr({ commonName: names[0]!, altNames: names });
  const finalized = await client.finalizeOrder(order, csr);
  const cert = await client.getCertificate(finalized);
  return { key: key.toString(), cert };
}

/** The validity of a PEM certificate's leaf (ms). */
export async function validity(cert: string): Promise<{ notBefore: number; notAfter: number }> {
  const info = (await acmeClient()).crypto.readCertificateInfo(cert);
  return { notBefore: info.notBefore.getTime(), notAfter: info.notAfter.getTime() };
}
