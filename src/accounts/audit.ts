// The team's audit log of administrative actions (docs/api.md §19.11): sign-ins (failures too),
// API keys, members and invitations, domains, webhooks, team settings — who did it (a user or a
// key), when, from which address, through the dashboard, the API or the command line. Entries are
// appended once and never changed (no route updates or deletes them); they are kept for
// `retention.days` like the request log (store/collections.ts `auditLog`). Routes declare the
// action they record (api/platform/route.ts `audit`); sign-ins, which have no caller, and the
// command line record theirs here.
import type { ApiKeyRec, AuditRec, Store, UserRec } from '../store';
import type { AuditEntry } from '../schemas/audit';
import { newId, nowIso } from '../ids';
import { log } from '../log';

/** Every action the log records, and what it concerns (the target's type). */
export const AUDIT_ACTIONS = {
  'auth.signed_in': 'user',
  'auth.sign_in_failed': 'user',
  'auth.password_changed': 'user',
  'auth.totp_enabled': 'user',
  'auth.totp_disabled': 'user',
  'auth.password_reset_requested': 'user',
  'auth.password_reset': 'user',
  'auth.email_change_requested': 'user',
  'auth.email_changed': 'user',
  'api_key.created': 'api_key',
  'api_key.renamed': 'api_key',
  'api_key.deleted': 'api_key',
  'api_key.revoked': 'api_key',
  'api_key.role_lowered': 'api_key',
  'member.invited': 'invite',
  'member.invite_revoked': 'invite',
  'member.joined': 'user',
  'member.removed': 'user',
  'member.role_changed': 'user',
  'domain.created': 'domain',
  'domain.claimed': 'domain',
  'domain.updated': 'domain',
  'domain.deleted': 'domain',
  'webhook.created': 'webhook',
  'webhook.updated': 'webhook',
  'webhook.deleted': 'webhook',
  'webhook.secret_rotated': 'webhook',
  'team.settings_changed': 'team',
} as const;
export type AuditAction = keyof typeof AUDIT_ACTIONS;

/** Who acted: a user (signed in, or signing in), an API key, or the command line. */
export type Actor = { user: UserRec } | { key: ApiKeyRec } | 'cli';

export interface AuditInput {
  team: string;
  action: AuditAction;
  actor: Actor;
  ip: string | null;
  /** The target's id (its type is the action's). */
  targetId?: string | null;
  details?: Record<string, unknown> | null;
}

/** Fields never written to the log, whatever route sends them. */
const SECRET = /password|secret|token|code/i;

function actorOf(a: Actor): Pick<AuditRec, 'actor' | 'via'> {
  if (a === 'cli') return { actor: { type: 'cli', id: null, label: null }, via: 'cli' };
  if ('user' in a) return { actor: { type: 'user', id: a.user.id, label: a.user.email }, via: 'dashboard' };
  return { actor: { type: 'key', id: a.key.id, label: a.key.name }, via: 'api' };
}

export class AuditLog {
  constructor(private readonly store: Store) {}

  /** Append an entry; resolves after its commit. */
  async record(input: AuditInput): Promise<AuditRec> {
    const details = input.details ? Object.fromEntries(Object.entries(input.details).filter(([k]) => !SECRET.test(k))) : null;
    const rec: AuditRec = {
      id: newId(),
      team_id: input.team,
      created_at: nowIso(),
      action: input.action,
      ...actorOf(input.actor),
      ip: input.ip,
      target: { type: AUDIT_ACTIONS[input.action], id: input.targetId ?? null },
      details: details && Object.keys(details).length ? details : null,
    };
    await this.store.write(async (tx) => tx.auditLog.put(rec));
    log.info('audit', { team: rec.team_id, action: rec.action, actor: rec.actor.id ?? rec.via, ip: rec.ip });
    return rec;
  }
}

export const auditView = (r: AuditRec): AuditEntry => ({
  object: 'audit_log_entry',
  id: r.id,
  created_at: r.created_at,
  action: r.action,
  actor: r.actor,
  via: r.via,
  ip: r.ip,
  target: r.target,
  details: r.details,
});
