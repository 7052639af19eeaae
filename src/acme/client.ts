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

/** A certificate for `names` (the first is its subject), through HTTP-01. Throws what the CA said. */
export async function requestCertificate(deps: AcmeClientDeps, names: string[]): Promise<IssuedCertificate> {
  const acme = await acmeClient();
  const settings = deps.config.tls.acme;
  trustDirectory(acme, settings.ca_file);
  const acct = await account(acme, deps);
  const client = new acme.Client({ directoryUrl: settings.directory, accountKey: acct.key, ...(acct.url ? { accountUrl: acct.url } : {}) });
  // RSA 2048: the key every SMTP client and server still in use can speak (ECDSA is not yet universal among MTAs).
  const [key, csr] = await acme.crypto.createCsr({ commonName: names[0]!, altNames: names });
  const cert = await client.auto({
    csr,
    ...(settings.email ? { email: settings.email } : {}),
    termsOfServiceAgreed: settings.terms_agreed,
    challengePriority: ['http-01'],
    // acme-client's own pre-check asks the system resolver and port 80 directly; the CA's answer
    // is the one that counts, and its error names what it saw.
    skipChallengeVerification: true,
    challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
      const rec: AcmeChallengeRec = {
        id: challengeId(challenge.token),
        team_id: ACME_TEAM,
        created_at: nowIso(),
        kind: 'challenge',
        token: challenge.token,
        key_authorization: keyAuthorization,
      };
      await deps.store.write(async (tx) => tx.acme.put(rec));
    },
    challengeRemoveFn: async (_authz, challenge) => {
      await deps.store.write(async (tx) => tx.acme.remove(ACME_TEAM, challengeId(challenge.token)));
    },
  });
  if (acct.url === null) {
    const url = client.getAccountUrl();
    await deps.store.write(async (tx) => tx.acme.put({ ...acct, url }));
    log.info('acme.account_created', { directory: settings.directory, url });
  }
  return { key: key.toString(), cert };
}

/** The validity of a PEM certificate's leaf (ms). */
export async function validity(cert: string): Promise<{ notBefore: number; notAfter: number }> {
  const info = (await acmeClient()).crypto.readCertificateInfo(cert);
  return { notBefore: info.notBefore.getTime(), notAfter: info.notAfter.getTime() };
}
