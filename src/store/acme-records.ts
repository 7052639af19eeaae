// What ACME (RFC 8555) leaves in the store (docs/mail.md §4, "Certificates by ACME"): install-wide records (team '') of
// the `acme` collection, shared by every node of a cluster — the account, each certificate with
// its renewal state, and the HTTP-01 challenges being answered.

/** The install's team: ACME records belong to no team. */
export const ACME_TEAM = '';

/** The ACME account (RFC 8555 §7.3): its key, and its URL once the CA has made it. id `account`. */
export interface AcmeAccountRec {
  id: 'account';
  team_id: typeof ACME_TEAM;
  created_at: string;
  kind: 'account';
  /** The directory the account belongs to: another directory means another account. */
  directory: string;
  /** PEM private key. */
  key: string;
  url: string | null;
}

/** A certificate for a set of names, and how its renewal goes. id `cert <names joined by ,>`. */
export interface AcmeCertificateRec {
  id: string;
  team_id: typeof ACME_TEAM;
  created_at: string;
  kind: 'certificate';
  names: string[];
  /** PEM private key and certificate chain (leaf first); null until the first issuance. */
  key: string | null;
  cert: string | null;
  /** The leaf's validity (ISO); null until issued. */
  not_before: string | null;
  not_after: string | null;
  /** When a renewal is due (two thirds of the life), or the next try after a failure (ISO). */
  due_at: string;
  /** Failed attempts since the last success (the backoff's step). */
  failures: number;
  last_error: string | null;
  last_attempt_at: string | null;
  issued_at: string | null;
}

/** An HTTP-01 key authorization (RFC 8555 §8.3) being offered: any node may be asked. id `challenge <token>`. */
export interface AcmeChallengeRec {
  id: string;
  team_id: typeof ACME_TEAM;
  created_at: string;
  kind: 'challenge';
  token: string;
  key_authorization: string;
}

export type AcmeRec = AcmeAccountRec | AcmeCertificateRec | AcmeChallengeRec;
