// Relay mode (`delivery.mode = relay`): every message goes to the smarthost of `delivery.relay_url`
// instead of the recipients' MX hosts. smtp:// upgrades with STARTTLS when offered (port 587 by
// default, the submission port of RFC 6409), smtps:// is TLS from the first byte (RFC 8314 §3.3,
// port 465 by default); user:pass in the URL are sent with AUTH.
import type { Target, Security } from './smtp-client';

export function relayTarget(relayUrl: string, ehloName: string, requireTls: boolean): Target {
  const u = new URL(relayUrl);
  const implicit = u.protocol === 'smtps:';
  const security: Security = implicit ? 'implicit' : requireTls ? 'require-starttls' : 'starttls';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return {
    host,
    // The relay is the operator's own choice of host (possibly `localhost`): let the connection
    // resolve it as the system does, /etc/hosts included.
    addresses: [],
    port: u.port ? Number(u.port) : implicit ? 465 : 587,
    security,
    auth: u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined,
    ehloName,
  };
}
