// `posthorn keys create`: the same key creation as POST /api-keys, from the shell.
import type { Config } from '../config';
import { openStore, storeOptions } from '../store';
import { COMMAND_LINE, createApiKey } from '../accounts/api-keys';
import { AuditLog } from '../accounts/audit';
import { ApiError } from '../errors';
import { validate } from '../schemas/validate';
import { CreateApiKeyRequest } from '../schemas/api-keys';

export async function keysCreate(config: Config, opts: { name: string; permission?: string; domain?: string; team?: string; json: boolean }): Promise<number> {
  const store = await openStore(storeOptions(config));
  try {
    const teams = await store.teams.everything();
    // --team takes the id or the name (a name two teams share is ambiguous: give the id).
    const named = opts.team ? teams.filter((t) => t.id === opts.team || t.name === opts.team) : [];
    if (named.length > 1) {
      process.stderr.write(`posthorn: several teams are named ${opts.team} — give the id (${named.map((t) => t.id).join(', ')})\n`);
      return 2;
    }
    const team = opts.team ? named[0] : teams[0];
    if (!team) {
      process.stderr.write(opts.team ? `posthorn: no team ${opts.team}\n` : 'posthorn: no team yet — run `posthorn init` or `posthorn serve` first\n');
      return 1;
    }
    if (!opts.team && teams.length > 1) {
      process.stderr.write(`posthorn: several teams exist — choose one with --team ID or NAME:\n${teams.map((t) => `  ${t.id}  ${t.name}\n`).join('')}`);
      return 2;
    }
    // The request POST /api-keys takes, checked the same way.
    const request = validate(CreateApiKeyRequest, { name: opts.name, permission: opts.permission, domain_id: opts.domain ?? null }, 'body');
    const { key, token } = await createApiKey(store, team.id, request, COMMAND_LINE);
    await new AuditLog(store).record({
      team: team.id,
      action: 'api_key.created',
      actor: 'cli',
      ip: null,
      targetId: key.id,
      details: { name: key.name, permission: key.permission },
    });
    const out = { id: key.id, token, name: key.name, permission: key.permission, domain_id: key.domain_id, team_id: team.id };
    process.stdout.write(opts.json ? `${JSON.stringify(out)}\n` : `API key ${key.id} (${key.permission}): ${token}\n`);
    return 0;
  } catch (e) {
    if (e instanceof ApiError) {
      process.stderr.write(`posthorn: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    await store.close();
  }
}
