// `posthorn init [--json] [--new-team]`: provision a team for automation (README, "First email in five minutes", "CLI").
import type { Config } from '../config';
import { openStore, storeOptions } from '../store';
import { createTeam, type Credentials } from '../accounts/bootstrap';
import { setQuiet } from '../log';

export async function init(config: Config, opts: { json: boolean; adminEmail?: string; newTeam?: boolean; teamName?: string }): Promise<number> {
  // Logs share stdout: with --json the only line written is the JSON (a first start in cluster
  // mode would otherwise log its migration before it).
  if (opts.json) setQuiet(true);
  const store = await openStore(storeOptions(config));
  try {
    // Running init twice must not quietly make a second team (issue 35): another team is asked for.
    const teams = await store.teams.everything();
    if (teams.length > 0 && !opts.newTeam) {
      process.stderr.write(
        `posthorn: this install already has a team (${teams.map((t) => `${t.name} ${t.id}`).join(', ')}).\n` +
          '  Lost the API key? Make another: posthorn keys create --name NAME\n' +
          '  Lost the password? Use "Forgot your password?" on the sign-in page.\n' +
          '  Another team on this server: posthorn init --new-team [--team-name NAME] [--admin-email EMAIL]\n',
      );
      return 1;
    }
    const creds = await createTeam(store, { adminEmail: opts.adminEmail, name: opts.teamName });
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
