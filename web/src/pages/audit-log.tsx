// Settings → Audit log: the team's administrative actions (docs/api.md §19.11), newest first,
// filtered by group; read by admins and owners, changed by nobody.
import type { AuditEntry } from '../../../src/schemas/audit';
import { setQuery, useLocation } from '../router';
import { Empty, PagedTable, PageHeader, Time, usePaged, val } from '../ui';

const GROUPS: [string, string][] = [
  ['', 'Every action'],
  ['auth.', 'Sign-ins and account security'],
  ['api_key.', 'API keys'],
  ['member.', 'Members and invitations'],
  ['domain.', 'Domains'],
  ['webhook.', 'Webhooks'],
  ['team.', 'Team settings'],
];

/** The target and the request's fields, in a few words. */
function detail(e: AuditEntry): string {
  const fields = Object.entries(e.details ?? {})
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
  return fields;
}

export function AuditLogPage() {
  const { query } = useLocation();
  const action = query.get('action') ?? '';
  const paged = usePaged('/audit-log', { action });
  return (
    <>
      <PageHeader
        title="Audit log"
        back={{ href: '/dashboard/settings', label: 'Settings' }}
        description="Administrative actions in this team: who, when, from which address. Kept for the retention period; entries never change."
      />
      <div class="filters">
        <label>
          <span class="sr-only">Action</span>
          <select value={action} onChange={(e) => setQuery({ action: val(e), after: null, before: null })}>
            {GROUPS.map(([v, label]) => (
              <option value={v}>{label}</option>
            ))}
          </select>
        </label>
      </div>
      <PagedTable
        paged={paged}
        caption="Audit log"
        empty={<Empty title={action ? 'No action of this kind yet.' : 'No administrative action yet.'} />}
        columns={[
          { label: 'When', class: 'nowrap', render: (e) => <Time iso={e.created_at} /> },
          { label: 'Action', render: (e) => <span class="mono">{e.action}</span> },
          {
            label: 'Who',
            render: (e) => (
              <>
                {e.actor.type === 'cli' ? 'Command line' : (e.actor.label ?? e.actor.id)}{' '}
                <span class="muted small">({e.actor.type === 'key' ? 'API key' : e.via})</span>
              </>
            ),
          },
          { label: 'Address', render: (e) => <span class="mono small">{e.ip ?? '—'}</span> },
          {
            label: 'Details',
            render: (e) => (
              <span class="small" title={e.target?.id ? `${e.target.type} ${e.target.id}` : undefined}>
                {detail(e) || <span class="muted">{e.target?.type ?? '—'}</span>}
              </span>
            ),
          },
        ]}
      />
    </>
  );
}
