// A private Postfix instance for the comparison benchmark (compare.ts): its own configuration,
// queue and mailbox directories under a temp dir, listening on one loopback port, started with
// its master(8) in the foreground, stopped at exit. Nothing of the machine's own Postfix is touched.
// Needs Debian's `postfix` package and root (Postfix's master runs as root and drops privileges).
//
// Two roles:
//   mx     the MX of a receiving domain: mail to `@<domain>` is accepted, queued (fsynced) and
//          delivered by virtual(8) into one Maildir — what Posthorn does with inbound mail.
//   relay  a relay for 127.0.0.0/8 that sends everything to `relayhost` — what Posthorn does in
//          relay mode (Postfix signs nothing; Posthorn signs DKIM as well).
import { mkdirSync, writeFileSync, readFileSync, readdirSync, chmodSync, chownSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';

export const POSTFIX = '/usr/sbin/postfix';
const MASTER = '/usr/lib/postfix/sbin/master';
export const SMTP_SOURCE = '/usr/sbin/smtp-source';
export const SMTP_SINK = '/usr/sbin/smtp-sink';

/**
 * Postfix's smtp-source as both SMTP benchmarks drive it: 16 sessions, `count` messages of 2,048
 * bytes from sender@source.test to `to`, plain SMTP, a new connection per message. Throws on failure.
 */
export async function runSmtpSource(port: number, to: string, count: number): Promise<void> {
  const p = Bun.spawn([SMTP_SOURCE, '-s', '16', '-m', String(count), '-l', '2048', '-f', 'sender@source.test', '-t', to, `127.0.0.1:${port}`], {
    stdout: 'ignore',
    stderr: 'pipe',
  });
  const err = await new Response(p.stderr).text();
  if ((await p.exited) !== 0) throw new Error(`smtp-source failed: ${err}`);
}

export function postfixAvailable(): string | null {
  if (!existsSync(POSTFIX) || !existsSync(SMTP_SOURCE) || !existsSync(SMTP_SINK)) return "Debian's postfix package is not installed (apt-get install postfix)";
  if (process.getuid?.() !== 0) return 'a private Postfix instance needs root';
  return null;
}

export function postfixVersion(): string {
  try {
    return execFileSync('/usr/sbin/postconf', ['-d', '-h', 'mail_version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export interface PostfixInstance {
  port: number;
  dir: string;
  /** Messages delivered into the Maildir (role mx). */
  delivered(): number;
  /** Messages still in the queue (`postqueue -p` counts). */
  stop(): void;
}

export function startPostfix(dir: string, port: number, role: { kind: 'mx'; domain: string } | { kind: 'relay'; relayhost: string }): PostfixInstance {
  const etc = join(dir, 'etc');
  const spool = join(dir, 'spool');
  const data = join(dir, 'data');
  const mail = join(dir, 'mail');
  for (const d of [etc, spool, data, mail]) mkdirSync(d, { recursive: true });
  // Postfix's daemons run as `postfix` and `nobody`: they must be able to walk into the temp dir.
  chmodSync(dir, 0o755);
  chownSync(data, uid('postfix'), gid('postfix'));
  chownSync(mail, 65534, 65534);
  const main = [
    'compatibility_level = 3.6',
    `queue_directory = ${spool}`,
    `data_directory = ${data}`,
    'inet_interfaces = loopback-only',
    'inet_protocols = ipv4',
    'myhostname = mx.postfix.test',
    'mydomain = postfix.test',
    'myorigin = $myhostname',
    'mynetworks = 127.0.0.0/8',
    'mydestination =',
    'alias_maps =',
    'alias_database =',
    'smtpd_banner = $myhostname ESMTP',
    'biff = no',
    'smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination',
    // Delivery as fast as the machine allows: no artificial slow-down on either side.
    'default_process_limit = 100',
    'smtpd_client_connection_rate_limit = 0',
    'smtpd_client_connection_count_limit = 0',
    'in_flow_delay = 0',
    'smtp_destination_concurrency_limit = 20',
    'default_destination_concurrency_limit = 20',
    'smtp_connection_cache_on_demand = yes',
  ];
  if (role.kind === 'mx') {
    main.push(
      `virtual_mailbox_domains = ${role.domain}`,
      `virtual_mailbox_base = ${mail}`,
      'virtual_mailbox_maps = static:inbox/',
      'virtual_uid_maps = static:65534',
      'virtual_gid_maps = static:65534',
      'virtual_minimum_uid = 100',
      'relayhost =',
    );
  } else {
    main.push(`relayhost = ${role.relayhost}`, 'smtp_tls_security_level = none');
  }
  writeFileSync(join(etc, 'main.cf'), `${main.join('\n')}\n`);
  // master.cf: the machine's own, with the smtp listener moved to our port and chroot off.
  const services = readFileSync('/etc/postfix/master.cf', 'utf8')
    .split('\n')
    .map((l) =>
      /^smtp\s+inet\s/.test(l)
        ? `127.0.0.1:${port}      inet  n       -       n       -       -       smtpd`
        : l.replace(/^(\S+\s+\S+\s+\S+\s+\S+\s+)y(\s)/, '$1n$2'),
    )
    .join('\n');
  writeFileSync(join(etc, 'master.cf'), services);
  chmodSync(etc, 0o755);
  execFileSync(POSTFIX, ['-c', etc, 'set-permissions'], { stdio: 'ignore' });
  // master(8) in the foreground as our child: `postfix start` daemonizes through syslog, which
  // containers often lack; a foreground master needs neither and dies with us.
  const master = Bun.spawn([MASTER, '-c', etc, '-d'], { stdout: 'ignore', stderr: 'ignore' });
  const inbox = join(mail, 'inbox');
  const inst: PostfixInstance = {
    port,
    dir,
    delivered() {
      // Counted by reading the directories: a `find` listing of tens of thousands of paths
      // outgrows execFileSync's output buffer.
      let n = 0;
      for (const sub of ['new', 'cur']) {
        try {
          n += readdirSync(join(inbox, sub)).length;
        } catch (e) {
          // Not created yet; anything else is a real failure, not a count of 0.
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
      }
      return n;
    },
    stop() {
      master.kill('SIGTERM');
    },
  };
  process.on('exit', () => inst.stop());
  return inst;
}

function uid(user: string): number {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
}
function gid(user: string): number {
  return Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
}

/**
 * Postfix's smtp-sink (a C SMTP server that accepts and discards) on `port`, with a running count
 * of completed DATA commands read from its `-c` counter output.
 */
export function startSmtpSink(port: number): { port: number; pid: number; count(): number; stop(): void } {
  const proc = Bun.spawn([SMTP_SINK, '-c', '-u', 'nobody', `127.0.0.1:${port}`, '1024'], { stdout: 'pipe', stderr: 'ignore' });
  let count = 0;
  (async () => {
    const dec = new TextDecoder();
    let buf = '';
    const reader = proc.stdout.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value);
      // Lines like `sess=3 quit=3 mesg=42`, each ended by a carriage return.
      const parts = buf.split('\r');
      buf = parts.pop() ?? '';
      for (const p of parts) {
        const n = Number(/mesg=(\d+)/.exec(p)?.[1]);
        if (n > count) count = n;
      }
    }
  })();
  process.on('exit', () => proc.kill('SIGKILL'));
  return {
    port,
    pid: proc.pid,
    count: () => count,
    stop: () => proc.kill('SIGTERM'),
  };
}
