// `posthorn init [--json]`: provision a team for automation (README, "First email in five minutes").
import type { Config } from '../config';
import { openStore, storeOptions } from '../store';
import { createTeam, type Credentials } from '../accounts/bootstrap';
import { setQuiet } from '../log';

export async function init(config: Config, opts: { json: boolean; adminEmail?: string }): Promise<number> {
  // Logs share stdout: with --json the only line written is the JSON (a first start in cluster
  // mode would otherwise log its migration before it).
  if (opts.json) setQuiet(true);
  const store = await openStore(storeOptions(config));
  try {
    const creds = await createTeam(store, { adminEmail: opts.adminEmail });
    process.stdout.write(opts.json ? `${JSON.stringify(creds)}\n` : formatCredentials(creds));
    return 0;
  } finally {
    await store.close();
  }
}

export function formatCredentials(c: Credentials): string {
  return [
    '',
    '  Posthorn team created. These credentials are shown once — keep them safe.',
    '',
    `    API key         ${c.api_key}`,
    `    Team id         ${c.team_id}`,
    `    Admin email     ${c.admin_email}`,
    `    Admin password  ${c.admin_password}`,
    '',
    '',
  ].join('\n');
}
