// The team's audit log (docs/api.md §19.11): administrative actions, newest first, paged like every
// list. Read by admins and owners; there is no route that changes or deletes an entry.
import type { ApiContext } from '../app';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { resource, route } from '../platform/route';
import { List } from '../../schemas/common';
import { AuditEntry, AuditQuery } from '../../schemas/audit';
import { AUDIT_ACTIONS, auditView } from '../../accounts/audit';

export const auditLogResource = resource('Audit log', ({ store }: ApiContext) => [
  route({
    method: 'GET',
    path: '/audit-log',
    summary: 'The team’s audit log of administrative actions, newest first (Posthorn)',
    access: 'team',
    role: 'admin',
    query: AuditQuery,
    body: 'none',
    response: List(AuditEntry),
    async handler({ caller, query }) {
      const action = query.action;
      if (action !== undefined && !Object.keys(AUDIT_ACTIONS).some((a) => a === action || (action.endsWith('.') && a.startsWith(action))))
        throw errors.validation('`action` must be an action of the audit log (docs/api.md §19.11), or its group such as `member.`.');
      const page = await store.auditLog.page(caller.team, pageQuery(query), 20, (r) =>
        action === undefined || r.action === action || (action.endsWith('.') && r.action.startsWith(action)) ? auditView(r) : undefined,
      );
      return listOf(page);
    },
  }),
]);
