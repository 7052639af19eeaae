// GET /smtp-settings (docs/api.md §19.16): how to send through Posthorn's SMTP submission — the
// host name clients connect to (`smtp.hostname`, the name on its certificate), the listening ports,
// the user name and what the password is — for the dashboard's SMTP page and its snippets.
import type { ApiContext } from '../app';
import { resource, route } from '../platform/route';
import { SmtpSettings } from '../../schemas/accounts';

export const smtpSettingsResource = resource('SMTP settings', ({ config }: ApiContext) => [
  route({
    method: 'GET',
    path: '/smtp-settings',
    summary: 'How to send through SMTP: host, ports, user name; the password is an API key (Posthorn)',
    access: 'team',
    body: 'none',
    response: SmtpSettings,
    handler: () => ({
      object: 'smtp_settings' as const,
      host: config.smtp.hostname,
      tls_ports: config.smtp.tls_ports,
      starttls_ports: config.smtp.starttls_ports,
      username: config.smtp.username,
      password: 'An API key of this team (full_access, or sending_access).',
    }),
  }),
]);
