// Configuration: config.example.toml documents every key with its default, environment variables
// override the file, and bad values stop start-up with a ConfigError naming the key (README.md, Configuration).
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig, ConfigError, KEYS, parseDuration, DEFAULT_DELIVERY_RETRY, DEFAULT_WEBHOOK_RETRY, type Config } from '../src/config';

const EXAMPLE = resolve(import.meta.dir, '..', 'config.example.toml');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'posthorn-config-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function writeToml(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The ConfigError thrown by `fn`; fails the test when nothing (or something else) is thrown. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError, nothing was thrown');
}

function expectKeyError(fn: () => unknown, key: string) {
  const e = configError(fn);
  expect(e.key).toBe(key);
  expect(e.message).toContain(`\`${key}\``);
  return e;
}

const HOUR = 3_600_000;
const MIN = 60_000;

describe('defaults and config.example.toml', () => {
  test('without file or environment, every key has its documented default', () => {
    const c = loadConfig({ env: {} });
    expect(c).toEqual({
      data_dir: './data',
      database: { url: null },
      public_url: 'http://localhost:3000',
      http: { host: '0.0.0.0', port: 3000, tls_cert: null, tls_key: null, trusted_proxies: [] },
      smtp: {
        host: '0.0.0.0',
        hostname: 'localhost',
        username: 'resend',
        starttls_ports: [25, 587, 2587],
        tls_ports: [465, 2465],
        tls_cert: null,
        tls_key: null,
        max_connections: 1000,
        allow_bare_newlines: false,
        greeting_delay: 0,
      },
      dns: { servers: [] },
      tls: {
        acme: {
          enabled: false,
          directory: 'https://acme-v02.api.letsencrypt.org/directory',
          email: null,
          ca_file: null,
          terms_agreed: false,
          https_ports: [443],
        },
      },
      delivery: {
        mode: 'direct',
        relay_url: null,
        mx_port: 25,
        retry_schedule: [5 * MIN, 10 * MIN, 30 * MIN, HOUR, 2 * HOUR, 4 * HOUR, ...Array(8).fill(8 * HOUR)],
        retry_window: 72 * HOUR,
        shaping: { enabled: true, default: {}, sites: {} },
        bounce_classes: {},
        mta_sts: { enabled: true, ca_file: null, port: 443 },
        sandbox: true,
        feedback_id: null,
        ips: [],
        warmup: { new_daily: 150, new_growth: 1.4, established_daily: 1000, established_growth: 1.5 },
      },
      cluster: { region: null, regions: [] },
      limits: { requests_per_second: 10, session_requests_per_second: 50, emails_per_hour: 0, emails_per_day: 0 },
      dkim: { rotation_grace: 7 * 24 * HOUR },
      retention: { days: 30 },
      security: { allow_private_networks: false },
      deliverability: {
        check_interval: HOUR,
        sending_addresses: [],
        dnsbl: {
          ip_zones: ['zen.spamhaus.org', 'b.barracudacentral.org', 'bl.spamcop.net', 'psbl.surriel.com', 'bl.mailspike.net'],
          domain_zones: ['dbl.spamhaus.org', 'multi.uribl.com', 'multi.surbl.org'],
          spamhaus_dqs_key: null,
        },
        port25_probe: null,
        dmarc_rua: null,
        tlsrpt_from: null,
      },
      webhooks: { retry_schedule: [5000, 5 * MIN, 30 * MIN, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR] },
      tracking: { prefetch_window: 5000 },
      spam: { rspamd_url: null, timeout: 5000, review_threshold: 5 },
      agent: { url: null, model: null, api_key: null, timeout_ms: 60_000, daily_budget: 200 },
      metrics: { token: null },
      auth: {
        session_idle_timeout: 12 * HOUR,
        session_lifetime: 7 * 24 * HOUR,
        oidc: { issuer: null, client_id: null, client_secret: null, allowed_domains: [] },
        system_from: 'Posthorn <posthorn@localhost>',
      },
    } satisfies Config);
  });

  test('the default delivery schedule stays within the 72 h retry window', () => {
    const total = DEFAULT_DELIVERY_RETRY.split(',').reduce((sum, d) => sum + parseDuration(d)!, 0);
    expect(total).toBeLessThanOrEqual(72 * HOUR);
    expect(total).toBeGreaterThan(70 * HOUR);
    expect(DEFAULT_WEBHOOK_RETRY).toBe('5s,5m,30m,2h,5h,10h,10h');
  });

  test('config.example.toml loads cleanly and yields exactly the defaults', () => {
    expect(loadConfig({ path: EXAMPLE, env: {} })).toEqual(loadConfig({ env: {} }));
  });

  test('config.example.toml sets every key and names every environment variable', () => {
    const text = readFileSync(EXAMPLE, 'utf8');
    const toml = Bun.TOML.parse(text) as Record<string, unknown>;
    for (const def of KEYS) {
      const [a, b] = def.key.split('.');
      const value = b === undefined ? toml[a] : (toml[a] as Record<string, unknown> | undefined)?.[b];
      expect({ key: def.key, present: value !== undefined }).toEqual({ key: def.key, present: true });
      // Each env var is named in the comments (the *_KEY ones next to their *_CERT sibling).
      expect({ key: def.key, env: text.includes(def.env) }).toEqual({ key: def.key, env: true });
    }
  });

  test('POSTHORN_CONFIG names the file when no path is given', () => {
    const path = writeToml('via-env.toml', 'data_dir = "/var/lib/posthorn"\n');
    expect(loadConfig({ env: { POSTHORN_CONFIG: path } }).data_dir).toBe('/var/lib/posthorn');
  });

  test('a missing or unparseable file is a ConfigError', () => {
    expect(configError(() => loadConfig({ path: join(dir, 'nope.toml'), env: {} })).message).toContain('file not found');
    const broken = writeToml('broken.toml', '[http\nport = 1\n');
    expect(configError(() => loadConfig({ path: broken, env: {} })).message).toContain('cannot parse');
  });
});

describe('file values and environment overrides', () => {
  test('file values replace defaults; a trailing slash on public_url is dropped', () => {
    const path = writeToml(
      'values.toml',
      `public_url = "https://mail.example.test/"
[http]
port = 8080
[smtp]
hostname = "mx.example.test"
starttls_ports = [2587]
tls_ports = []
[delivery]
retry_schedule = "1s,2s"
`,
    );
    const c = loadConfig({ path, env: {} });
    expect(c.public_url).toBe('https://mail.example.test');
    expect(c.http.port).toBe(8080);
    expect(c.smtp.hostname).toBe('mx.example.test');
    expect(c.smtp.starttls_ports).toEqual([2587]);
    expect(c.smtp.tls_ports).toEqual([]);
    expect(c.delivery.retry_schedule).toEqual([1000, 2000]);
  });

  test('environment variables win over the file', () => {
    const path = writeToml('override.toml', '[http]\nport = 8080\nhost = "127.0.0.1"\n');
    const c = loadConfig({ path, env: { POSTHORN_HTTP_PORT: '9090' } });
    expect(c.http.port).toBe(9090);
    expect(c.http.host).toBe('127.0.0.1');
  });

  test('scalar environment overrides are coerced to their types', () => {
    const c = loadConfig({
      env: {
        POSTHORN_DATA_DIR: '/srv/posthorn',
        POSTHORN_PUBLIC_URL: 'https://posthorn.example.test',
        POSTHORN_HTTP_HOST: '127.0.0.1',
        POSTHORN_HTTP_PORT: '0',
        POSTHORN_SMTP_HOST: '::',
        POSTHORN_SMTP_HOSTNAME: 'mail.example.test',
        POSTHORN_SMTP_USERNAME: 'posthorn',
        POSTHORN_DELIVERY_MX_PORT: '2525',
        POSTHORN_LIMITS_REQUESTS_PER_SECOND: ' 250 ',
        POSTHORN_RETENTION_DAYS: '7',
      },
    });
    expect(c.data_dir).toBe('/srv/posthorn');
    expect(c.public_url).toBe('https://posthorn.example.test');
    expect(c.http).toMatchObject({ host: '127.0.0.1', port: 0 });
    expect(c.smtp).toMatchObject({ host: '::', hostname: 'mail.example.test', username: 'posthorn' });
    expect(c.delivery.mx_port).toBe(2525);
    expect(c.limits.requests_per_second).toBe(250);
    expect(c.retention.days).toBe(7);
  });

  test('comma lists: SMTP ports (an empty value means none)', () => {
    const c = loadConfig({ env: { POSTHORN_SMTP_STARTTLS_PORTS: '2525, 2587', POSTHORN_SMTP_TLS_PORTS: '' } });
    expect(c.smtp.starttls_ports).toEqual([2525, 2587]);
    expect(c.smtp.tls_ports).toEqual([]);
  });

  test('comma lists: DNS servers as ip, ip:port, bare IPv6 and [IPv6]:port', () => {
    const c = loadConfig({ env: { POSTHORN_DNS_SERVERS: '127.0.0.1:5353, 10.0.0.1,::1,[fd00::53]:5300,2001:db8::1' } });
    expect(c.dns.servers).toEqual(['127.0.0.1:5353', '10.0.0.1', '::1', '[fd00::53]:5300', '2001:db8::1']);
  });

  test('comma lists: trusted proxies as addresses and CIDR ranges; anything else is refused', () => {
    const c = loadConfig({ env: { POSTHORN_HTTP_TRUSTED_PROXIES: '127.0.0.1, ::1,10.0.0.0/8, fd00::/8' } });
    expect(c.http.trusted_proxies).toEqual(['127.0.0.1', '::1', '10.0.0.0/8', 'fd00::/8']);
    for (const bad of ['localhost', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '0x7f.1', '10.0.0.0/'])
      expect(() => loadConfig({ env: {}, overrides: { 'http.trusted_proxies': [bad] } })).toThrow('http.trusted_proxies');
  });

  test('comma lists: retry schedules in ms, s, m, h and d', () => {
    const c = loadConfig({
      env: { POSTHORN_DELIVERY_RETRY_SCHEDULE: '250ms,1s,2m', POSTHORN_WEBHOOKS_RETRY_SCHEDULE: '1h, 1.5h,1d' },
    });
    expect(c.delivery.retry_schedule).toEqual([250, 1000, 2 * MIN]);
    expect(c.webhooks.retry_schedule).toEqual([HOUR, 1.5 * HOUR, 24 * HOUR]);
  });

  test('booleans: true/false, 1/0, yes/no, on/off, any case', () => {
    for (const v of ['true', '1', 'yes', 'ON', 'True'])
      expect(loadConfig({ env: { POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS: v } }).security.allow_private_networks).toBe(true);
    for (const v of ['false', '0', 'no', 'off', 'FALSE'])
      expect(loadConfig({ env: { POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS: v } }).security.allow_private_networks).toBe(false);
  });

  test('relay mode with an smtp:// or smtps:// relay_url', () => {
    const c = loadConfig({ env: { POSTHORN_DELIVERY_MODE: 'relay', POSTHORN_DELIVERY_RELAY_URL: 'smtps://user:secret@127.0.0.1:2465' } });
    expect(c.delivery).toMatchObject({ mode: 'relay', relay_url: 'smtps://user:secret@127.0.0.1:2465' });
  });

  test('TLS certificate and key together, from files that exist', () => {
    const cert = writeToml('cert.pem', '-----BEGIN CERTIFICATE-----\n');
    const key = writeToml('key.pem', '-----BEGIN PRIVATE KEY-----\n');
    const c = loadConfig({ env: { POSTHORN_HTTP_TLS_CERT: cert, POSTHORN_HTTP_TLS_KEY: key } });
    expect(c.http).toMatchObject({ tls_cert: cert, tls_key: key });
    // An empty value means unset.
    expect(loadConfig({ env: { POSTHORN_SMTP_TLS_CERT: '', POSTHORN_SMTP_TLS_KEY: '' } }).smtp.tls_cert).toBeNull();
  });

  test('database.url selects PostgreSQL with a postgres:// or postgresql:// URL; empty means the embedded store', () => {
    expect(loadConfig({ env: { POSTHORN_DATABASE_URL: 'postgres://posthorn@127.0.0.1:5432/posthorn' } }).database.url).toBe(
      'postgres://posthorn@127.0.0.1:5432/posthorn',
    );
    expect(loadConfig({ env: { POSTHORN_DATABASE_URL: 'postgresql://127.0.0.1/p' } }).database.url).toBe('postgresql://127.0.0.1/p');
    expect(loadConfig({ env: { POSTHORN_DATABASE_URL: '' } }).database.url).toBeNull();
  });

  test('test overrides (dotted keys) win over the environment', () => {
    const c = loadConfig({ env: { POSTHORN_HTTP_PORT: '9090' }, overrides: { 'http.port': 0, 'smtp.tls_ports': [] } });
    expect(c.http.port).toBe(0);
    expect(c.smtp.tls_ports).toEqual([]);
  });
});

describe('bad values fail with a ConfigError naming the key', () => {
  test('bad port', () => {
    expectKeyError(() => loadConfig({ env: { POSTHORN_HTTP_PORT: '70000' } }), 'http.port');
    expectKeyError(() => loadConfig({ env: { POSTHORN_HTTP_PORT: 'http' } }), 'http.port');
    expectKeyError(() => loadConfig({ env: { POSTHORN_DELIVERY_MX_PORT: '0' } }), 'delivery.mx_port');
    expectKeyError(() => loadConfig({ env: { POSTHORN_SMTP_STARTTLS_PORTS: '25,abc' } }), 'smtp.starttls_ports');
    expectKeyError(() => loadConfig({ env: { POSTHORN_SMTP_TLS_PORTS: '465,-1' } }), 'smtp.tls_ports');
    const path = writeToml('port.toml', '[http]\nport = 3000.5\n');
    expectKeyError(() => loadConfig({ path, env: {} }), 'http.port');
  });

  test('the message says where a bad value came from', () => {
    const e = expectKeyError(() => loadConfig({ env: { POSTHORN_HTTP_PORT: '70000' } }), 'http.port');
    expect(e.message).toContain('POSTHORN_HTTP_PORT');
    expect(e.message).toContain('70000');
  });

  test('the same SMTP port twice', () => {
    expectKeyError(() => loadConfig({ env: { POSTHORN_SMTP_STARTTLS_PORTS: '2525,2525' } }), 'smtp.starttls_ports');
    expectKeyError(() => loadConfig({ env: { POSTHORN_SMTP_STARTTLS_PORTS: '2525', POSTHORN_SMTP_TLS_PORTS: '2525' } }), 'smtp.tls_ports');
  });

  test('bad url', () => {
    expectKeyError(() => loadConfig({ env: { POSTHORN_PUBLIC_URL: 'localhost:3000/x' } }), 'public_url');
    expectKeyError(() => loadConfig({ env: { POSTHORN_PUBLIC_URL: 'not a url' } }), 'public_url');
    expectKeyError(() => loadConfig({ env: { POSTHORN_PUBLIC_URL: 'ftp://example.test' } }), 'public_url');
    expectKeyError(
      () => loadConfig({ env: { POSTHORN_DELIVERY_MODE: 'relay', POSTHORN_DELIVERY_RELAY_URL: 'http://relay.example.test' } }),
      'delivery.relay_url',
    );
  });

  test('a database.url that is not a PostgreSQL URL', () => {
    expectKeyError(() => loadConfig({ env: { POSTHORN_DATABASE_URL: 'mysql://127.0.0.1/p' } }), 'database.url');
    expectKeyError(() => loadConfig({ env: { POSTHORN_DATABASE_URL: '/var/lib/posthorn' } }), 'database.url');
  });

  test('spam scoring: an http(s) URL of rspamd, a bounded timeout, a number for the review threshold', () => {
    const c = loadConfig({ env: { POSTHORN_SPAM_RSPAMD_URL: 'http://127.0.0.1:11333/', POSTHORN_SPAM_TIMEOUT: '2s', POSTHORN_SPAM_REVIEW_THRESHOLD: '6.5' } });
    expect(c.spam).toEqual({ rspamd_url: 'http://127.0.0.1:11333', timeout: 2000, review_threshold: 6.5 });
    expect(loadConfig({ path: writeToml('spam.toml', '[spam]\nreview_threshold = -2\n'), env: {} }).spam.review_threshold).toBe(-2);
    expectKeyError(() => loadConfig({ env: { POSTHORN_SPAM_RSPAMD_URL: '127.0.0.1:11333' } }), 'spam.rspamd_url');
    expectKeyError(() => loadConfig({ env: { POSTHORN_SPAM_RSPAMD_URL: 'ftp://127.0.0.1' } }), 'spam.rspamd_url');
    expectKeyError(() => loadConfig({ env: { POSTHORN_SPAM_TIMEOUT: '5m' } }), 'spam.timeout');
    expectKeyError(() => loadConfig({ env: { POSTHORN_SPAM_REVIEW_THRESHOLD: 'high' } }), 'spam.review_threshold');
  });

  test('the inbox agent: an http(s) base URL with a model, a bounded timeout, a budget', () => {
    const c = loadConfig({
      env: {
        POSTHORN_AGENT_URL: 'http://127.0.0.1:11434/v1/',
        POSTHORN_AGENT_MODEL: 'llama3.1:8b',
        POSTHORN_AGENT_TIMEOUT_MS: '5000',
        POSTHORN_AGENT_DAILY_BUDGET: '0',
      },
    });
    expect(c.agent).toEqual({ url: 'http://127.0.0.1:11434/v1', model: 'llama3.1:8b', api_key: null, timeout_ms: 5000, daily_budget: 0 });
    expectKeyError(() => loadConfig({ env: { POSTHORN_AGENT_URL: 'http://127.0.0.1:11434/v1' } }), 'agent.model');
    expectKeyError(() => loadConfig({ env: { POSTHORN_AGENT_URL: '127.0.0.1:11434', POSTHORN_AGENT_MODEL: 'm' } }), 'agent.url');
    expectKeyError(() => loadConfig({ env: { POSTHORN_AGENT_TIMEOUT_MS: '100' } }), 'agent.timeout_ms');
    expectKeyError(() => loadConfig({ env: { POSTHORN_AGENT_DAILY_BUDGET: '-1' } }), 'agent.daily_budget');
  });

  test('bad enum', () => {
    const e = expectKeyError(() => loadConfig({ env: { POSTHORN_DELIVERY_MODE: 'smarthost' } }), 'delivery.mode');
    expect(e.message).toContain('direct, relay');
  });

  test('bad duration and duration list', () => {
    expectKeyError(() => loadConfig({ env: { POSTHORN_DELIVERY_RETRY_SCHEDULE: '5m,ten minutes' } }), 'delivery.retry_schedule');
    expectKeyError(() => loadConfig({ env: { POSTHORN_DELIVERY_RETRY_SCHEDULE: '5' } }), 'delivery.retry_schedule');
    expectKeyError(() => loadConfig({ env: { POSTHORN_WEBHOOKS_RETRY_SCHEDULE: '0s' } }), 'webhooks.retry_schedule');
    expectKeyError(() => loadConfig({ env: { POSTHORN_WEBHOOKS_RETRY_SCHEDULE: '' } }), 'webhooks.retry_schedule');
    expect(loadConfig({ env: { POSTHORN_SMTP_GREETING_DELAY: '2s' } }).smtp.greeting_delay).toBe(2000);
    expectKeyError(() => loadConfig({ env: { POSTHORN_SMTP_GREETING_DELAY: '6m' } }), 'smtp.greeting_delay');
    const path = writeToml('durations.toml', '[webhooks]\nretry_schedule = []\n');
    expectKeyError(() => loadConfig({ path, env: {} }), 'webhooks.retry_schedule');
  });

  test('bad boolean, integer and DNS server', () => {
    expectKeyError(() => loadConfig({ env: { POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS: 'maybe' } }), 'security.allow_private_networks');
    expectKeyError(() => loadConfig({ env: { POSTHORN_LIMITS_REQUESTS_PER_SECOND: '0' } }), 'limits.requests_per_second');
    expectKeyError(() => loadConfig({ env: { POSTHORN_RETENTION_DAYS: '1.5' } }), 'retention.days');
    expectKeyError(() => loadConfig({ env: { POSTHORN_DNS_SERVERS: 'dns.example.test' } }), 'dns.servers');
    expectKeyError(() => loadConfig({ env: { POSTHORN_DNS_SERVERS: '127.0.0.1:0' } }), 'dns.servers');
    expectKeyError(() => loadConfig({ env: { POSTHORN_DNS_SERVERS: '[127.0.0.1]:53' } }), 'dns.servers');
    expectKeyError(() => loadConfig({ env: { POSTHORN_DATA_DIR: '' } }), 'data_dir');
  });

  test('a Feedback-ID sender id: a token without colons, or unset', () => {
    expect(loadConfig({ env: { POSTHORN_DELIVERY_FEEDBACK_ID: 'acme-mail' } }).delivery.feedback_id).toBe('acme-mail');
    expect(loadConfig({ env: { POSTHORN_DELIVERY_FEEDBACK_ID: '' } }).delivery.feedback_id).toBeNull();
    expectKeyError(() => loadConfig({ env: { POSTHORN_DELIVERY_FEEDBACK_ID: 'a:b' } }), 'delivery.feedback_id');
    expectKeyError(() => loadConfig({ env: { POSTHORN_DELIVERY_FEEDBACK_ID: 'two words' } }), 'delivery.feedback_id');
  });

  test('relay mode without relay_url', () => {
    expectKeyError(() => loadConfig({ env: { POSTHORN_DELIVERY_MODE: 'relay' } }), 'delivery.relay_url');
  });

  test('unknown key in the file, at the top level or in a section', () => {
    expectKeyError(() => loadConfig({ path: writeToml('unknown1.toml', 'datadir = "./data"\n'), env: {} }), 'datadir');
    expectKeyError(() => loadConfig({ path: writeToml('unknown2.toml', '[http]\nprot = 3000\n'), env: {} }), 'http.prot');
    expectKeyError(() => loadConfig({ path: writeToml('unknown3.toml', '[smtpd]\nhost = "::"\n'), env: {} }), 'smtpd');
    expectKeyError(() => loadConfig({ path: writeToml('unknown4.toml', '[http.tls]\ncert = "x"\n'), env: {} }), 'http.tls');
  });

  test('wrong type in the file', () => {
    expectKeyError(() => loadConfig({ path: writeToml('type1.toml', '[smtp]\nstarttls_ports = 25\n'), env: {} }), 'smtp.starttls_ports');
    expectKeyError(
      () => loadConfig({ path: writeToml('type2.toml', '[security]\nallow_private_networks = "sometimes"\n'), env: {} }),
      'security.allow_private_networks',
    );
    expectKeyError(() => loadConfig({ path: writeToml('type3.toml', 'data_dir = 5\n'), env: {} }), 'data_dir');
  });

  test('TLS certificate without key (and key without certificate)', () => {
    const cert = writeToml('only-cert.pem', 'x');
    expectKeyError(() => loadConfig({ env: { POSTHORN_HTTP_TLS_CERT: cert } }), 'http.tls_cert');
    expectKeyError(() => loadConfig({ env: { POSTHORN_SMTP_TLS_KEY: cert } }), 'smtp.tls_cert');
    const path = writeToml('tls.toml', `[smtp]\ntls_cert = "${cert}"\n`);
    expectKeyError(() => loadConfig({ path, env: {} }), 'smtp.tls_cert');
  });

  test('TLS file that does not exist', () => {
    const cert = writeToml('exists.pem', 'x');
    expectKeyError(() => loadConfig({ env: { POSTHORN_HTTP_TLS_CERT: cert, POSTHORN_HTTP_TLS_KEY: join(dir, 'missing.key') } }), 'http.tls_key');
  });
});
