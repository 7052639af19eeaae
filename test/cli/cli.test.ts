// The command line as a user runs it: real child processes of `bun src/main.ts`.
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { openStore } from '../../src/store';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '../helpers/wait';

const MAIN = join(import.meta.dir, '../../src/main.ts');
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'posthorn-cli-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string> = {}) {
  const r = Bun.spawnSync([process.execPath, MAIN, ...args], { env: { ...process.env, POSTHORN_LOG: 'silent', ...env } });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

describe('posthorn CLI', () => {
  test('version', () => {
    const r = run(['version']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^posthorn \d+\.\d+\.\d+/);
  });

  test('init --json prints the credentials; keys create makes a working key', async () => {
    const data = tmp();
    const init = run(['init', '--json'], { POSTHORN_DATA_DIR: data });
    expect(init.code).toBe(0);
    const creds = JSON.parse(init.out);
    expect(Object.keys(creds).sort()).toEqual(['admin_email', 'admin_password', 'api_key', 'team_id']);
    expect(creds.api_key).toMatch(/^re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}$/);

    const key = run(['keys', 'create', '--name', 'deploy', '--permission', 'sending_access', '--json'], { POSTHORN_DATA_DIR: data });
    expect(key.code).toBe(0);
    const k = JSON.parse(key.out);
    expect(k).toMatchObject({ name: 'deploy', permission: 'sending_access', team_id: creds.team_id });

    const bad = run(['keys', 'create', '--name', 'x', '--permission', 'root'], { POSTHORN_DATA_DIR: data });
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('full_access');
    const missing = run(['keys', 'create'], { POSTHORN_DATA_DIR: data });
    expect(missing.code).toBe(2);
  });

  test('init on an install with a team refuses unless --new-team; keys create then needs --team (id or name)', () => {
    const data = tmp();
    const env = { POSTHORN_DATA_DIR: data };
    const first = JSON.parse(run(['init', '--json'], env).out);
    const again = run(['init', '--json'], env);
    expect(again.code).toBe(1);
    expect(again.out).toBe('');
    expect(again.err).toContain('already has a team');
    expect(again.err).toContain('--new-team');
    expect(run(['init', '--team-name', 'Ops'], env).code).toBe(2); // --team-name goes with --new-team
    const second = run(['init', '--json', '--new-team', '--team-name', 'Ops', '--admin-email', 'ops@dest.test'], env);
    expect(second.code).toBe(0);
    const ops = JSON.parse(second.out);
    expect(ops.team_id).not.toBe(first.team_id);
    expect(ops.admin_email).toBe('ops@dest.test');
    // Two teams: keys create names one.
    const unnamed = run(['keys', 'create', '--name', 'k'], env);
    expect(unnamed.code).toBe(2);
    expect(unnamed.err).toContain('--team');
    expect(unnamed.err).toContain(ops.team_id);
    const byName = JSON.parse(run(['keys', 'create', '--name', 'k', '--team', 'Ops', '--json'], env).out);
    expect(byName.team_id).toBe(ops.team_id);
    const byId = JSON.parse(run(['keys', 'create', '--name', 'k', '--team', first.team_id, '--json'], env).out);
    expect(byId.team_id).toBe(first.team_id);
    expect(run(['keys', 'create', '--name', 'k', '--team', 'Nope'], env).code).toBe(1);
    expect(run(['help']).out).toContain('--new-team');
  });

  test('backup writes a consistent copy that opens as a Posthorn store', async () => {
    const data = tmp();
    const creds = JSON.parse(run(['init', '--json'], { POSTHORN_DATA_DIR: data }).out);
    const dest = join(tmp(), 'copy.mdb');
    const r = run(['backup', dest], { POSTHORN_DATA_DIR: data });
    expect(r.code).toBe(0);
    expect(run(['backup', dest], { POSTHORN_DATA_DIR: data }).code).toBe(1); // never overwrites
    // Restore: the copy as the database file of a fresh data dir.
    const restored = tmp();
    copyFileSync(dest, join(restored, 'posthorn.mdb'));
    const store = await openStore({ dataDir: restored, retentionDays: 30, holdMs: 0 });
    expect((await store.teams.get(creds.team_id, creds.team_id))?.id).toBe(creds.team_id);
    await store.close();
  });

  test('a bad configuration value stops start-up with a message naming the key', () => {
    const r = run(['serve'], { POSTHORN_DATA_DIR: tmp(), POSTHORN_HTTP_PORT: 'eighty' });
    expect(r.code).toBe(78);
    expect(r.err).toContain('`http.port`');
    const dir = tmp();
    writeFileSync(join(dir, 'c.toml'), '[delivery]\nmode = "carrier-pigeon"\n');
    const f = run(['serve', '--config', join(dir, 'c.toml')], { POSTHORN_DATA_DIR: dir });
    expect(f.code).toBe(78);
    expect(f.err).toContain('`delivery.mode`');
  });

  test('doctor on a fresh install names the localhost problem and its fix, and exits 1', () => {
    // DNS to a closed loopback port: nothing is asked outside 127.0.0.0/8.
    const env = { POSTHORN_DATA_DIR: tmp(), POSTHORN_DNS_SERVERS: '127.0.0.1:9' };
    const human = run(['doctor'], env);
    expect(human.code).toBe(1);
    expect(human.out).toContain('FAIL  smtp_hostname');
    expect(human.out).toContain('fix: Set smtp.hostname (POSTHORN_SMTP_HOSTNAME)');
    const json = run(['doctor', '--json'], env);
    expect(json.code).toBe(1);
    const checks = JSON.parse(json.out).checks as { name: string; status: string; evidence: string; fix: string }[];
    expect(checks.find((c) => c.name === 'smtp_hostname')).toMatchObject({ status: 'fail', evidence: expect.stringContaining('"localhost"') });
    for (const c of checks) expect(Object.keys(c).sort()).toEqual(['evidence', 'fix', 'name', 'status']);
  });

  test('a bounce class rule that names an unknown class stops start-up naming the key (README.md, "Bounce classes and incidents")', () => {
    const dir = tmp();
    writeFileSync(join(dir, 'c.toml'), '[delivery.bounce_classes.patterns.corp]\nclass = "reputaton"\nmatch = [\'corp says no\']\n');
    const r = run(['serve', '--config', join(dir, 'c.toml')], { POSTHORN_DATA_DIR: dir });
    expect(r.code).toBe(78);
    expect(r.err).toContain('config: `delivery.bounce_classes.patterns.corp.class` names an unknown class "reputaton"');
  });

  test('first serve on an empty data dir bootstraps and prints the credentials once', async () => {
    const data = tmp();
    const port = 20000 + Math.floor(Math.random() * 20000);
    const env = {
      ...process.env,
      POSTHORN_LOG: 'silent',
      POSTHORN_DATA_DIR: data,
      POSTHORN_HTTP_HOST: '127.0.0.1',
      POSTHORN_HTTP_PORT: String(port),
      POSTHORN_SMTP_STARTTLS_PORTS: '',
      POSTHORN_SMTP_TLS_PORTS: '',
      POSTHORN_DNS_SERVERS: '127.0.0.1:9',
    };
    const start = async () => {
      const child = Bun.spawn([process.execPath, MAIN, 'serve'], { env, stdout: 'pipe', stderr: 'pipe' });
      let out = '';
      const reader = child.stdout.getReader();
      const dec = new TextDecoder();
      // Wait (bounded: the first start hashes a password, slow on a loaded machine) for /health;
      // collect what the process printed meanwhile.
      await until(
        () =>
          fetch(`http://127.0.0.1:${port}/health`).then(
            (r) => r.ok,
            () => false,
          ),
        'serve to answer /health',
        40_000,
        100,
      );
      const read = async () => {
        const chunk = await Promise.race([reader.read(), Bun.sleep(300).then(() => null)]);
        if (chunk && !chunk.done) {
          out += dec.decode(chunk.value);
          await read();
        }
      };
      await read();
      return { child, out: () => out };
    };
    const first = await start();
    const key = /re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}/.exec(first.out())?.[0];
    expect(key).toBeDefined();
    // The defaults cannot deliver, and the start says so (docs/deliverability.md §1.1).
    expect(first.out()).toContain('Posthorn cannot deliver mail to the Internet with this configuration');
    const r = await fetch(`http://127.0.0.1:${port}/api-keys`, { headers: { authorization: `Bearer ${key}` } });
    expect(r.status).toBe(200);
    first.child.kill('SIGTERM');
    expect(await first.child.exited).toBe(0);

    const second = await start();
    expect(second.out()).not.toMatch(/re_[A-Za-z0-9]{8}_/);
    second.child.kill('SIGTERM');
    await second.child.exited;
  });
});
