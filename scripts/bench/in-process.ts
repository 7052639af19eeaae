// Posthorn's services in the benchmark's own process (or thread), for the benchmarks that call its
// HTTP handler or sending core directly: no back office (the delivery engine's queue just grows),
// no SMTP listeners, the rate limit out of the way, and a sending domain marked verified in the
// store (no DNS).
import { loadConfig } from '../../src/config';
import { createServices, type Services } from '../../src/services';
import { createTeam } from '../../src/accounts/bootstrap';
import { createHandler } from '../../src/api/server';
import { RATE_LIMIT } from './lib';

/** The services `serve` opens on `dataDir`, without starting the back office or any listener. */
export async function inProcessServices(dataDir: string, httpPort = 0): Promise<Services> {
  const overrides = {
    data_dir: dataDir,
    'http.host': '127.0.0.1',
    'limits.requests_per_second': RATE_LIMIT,
    'smtp.starttls_ports': [],
    'smtp.tls_ports': [],
    ...(httpPort ? { 'http.port': httpPort } : {}),
  };
  return createServices(loadConfig({ env: {}, overrides }));
}

/** A new team with `name` as its sending domain, verified: its API key and team id. */
export async function teamWithDomain(svc: Services, name: string): Promise<{ apiKey: string; teamId: string }> {
  const creds = await createTeam(svc.store);
  const res = await createHandler(svc)(
    new Request('http://127.0.0.1/domains', {
      method: 'POST',
      headers: { authorization: `Bearer ${creds.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    }),
  );
  if (!res.ok) throw new Error(`POST /domains: ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  const rec = (await svc.store.domains.get(creds.team_id, id))!;
  await svc.store.write(async (tx) =>
    tx.domains.put({
      ...rec,
      status: 'verified',
      record_status: { ...rec.record_status, 'SPF:MX': 'verified', 'SPF:TXT': 'verified', DKIM: 'verified' },
      verification: { ...rec.verification, checked_at: new Date().toISOString() },
    }),
  );
  return { apiKey: creds.api_key, teamId: creds.team_id };
}
