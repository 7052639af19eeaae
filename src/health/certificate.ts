// The SMTP listeners' certificate (docs/deliverability.md §1.5): senders use STARTTLS
// opportunistically and mostly accept any certificate (RFC 3207 §4.1), but MTA-STS and DANE senders
// verify it, and submission clients do: it must name smtp.hostname, come from a public CA on a
// public name, and not be about to expire (warn 21 days before, fail 7 days before).
import { existsSync, readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import type { Config } from '../config';
import { smtpCertificateFiles } from '../net/certificate-files';
import { type CheckResult, fail, pass, warn } from './check';

const DAY = 86_400_000;

export function certificateCheck(config: Pick<Config, 'smtp' | 'data_dir'>, now = Date.now()): CheckResult {
  const name = 'smtp_certificate';
  const host = config.smtp.hostname;
  const files = smtpCertificateFiles(config);
  if (!existsSync(files.cert))
    return warn(
      name,
      `no certificate yet at ${files.cert} (serve makes a self-signed one at its first start)`,
      'Start Posthorn once, or set smtp.tls_cert and smtp.tls_key to a certificate for smtp.hostname.',
    );
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(readFileSync(files.cert));
  } catch (e) {
    return fail(
      name,
      `${files.cert} is not a PEM certificate (${(e as Error).message})`,
      'Point smtp.tls_cert at the PEM certificate (full chain) for smtp.hostname.',
    );
  }
  const days = Math.floor((Date.parse(cert.validTo) - now) / DAY);
  const selfSigned = cert.checkIssued(cert);
  const covers = cert.checkHost(host) !== undefined;
  const evidence = `${files.cert}: ${cert.subject.replace(/\n/g, ', ')}, ${selfSigned ? 'self-signed' : `issued by ${cert.issuer.split('\n').find((l) => l.startsWith('O=') || l.startsWith('CN=')) ?? cert.issuer}`}, ${days < 0 ? `expired ${-days} days ago` : `expires in ${days} days`} (${cert.validTo})`;
  const renew = 'Renew it (certbot renew, or your CA) and restart Posthorn, or set smtp.tls_cert to the renewed file.';
  if (days < 7) return fail(name, evidence, renew);
  if (!covers)
    return fail(
      name,
      `${evidence}; it does not name ${host}`,
      `Get a certificate for ${host} (e.g. certbot certonly -d ${host}) and set smtp.tls_cert and smtp.tls_key.`,
    );
  if (days < 21) return warn(name, evidence, renew);
  if (selfSigned)
    return warn(
      name,
      `${evidence}: senders that verify (MTA-STS, DANE) and submission clients refuse it`,
      `Get a certificate for ${host} from a public CA (e.g. certbot certonly -d ${host}) and set smtp.tls_cert and smtp.tls_key.`,
    );
  return pass(name, evidence);
}

/** What the doctor knows of the ACME certificate (store/acme-records.ts `AcmeCertificateRec`). */
export interface AcmeCertificateState {
  names: string[];
  cert: string | null;
  not_after: string | null;
  due_at: string;
  failures: number;
  last_error: string | null;
  last_attempt_at: string | null;
}

/**
 * With `tls.acme.enabled` the listeners serve the certificate Posthorn obtains itself
 * (docs/mail.md §4, "Certificates by ACME"): the same verdicts on expiry and name, and the last renewal's error, which is what to fix
 * before the certificate in service runs out.
 */
export function acmeCertificateCheck(config: Pick<Config, 'smtp' | 'tls'>, state: AcmeCertificateState | undefined, now = Date.now()): CheckResult {
  const name = 'smtp_certificate';
  const host = config.smtp.hostname;
  const directory = config.tls.acme.directory;
  const failing = state?.last_error
    ? `; the last renewal attempt (${state.last_attempt_at}, ${state.failures} in a row) failed: ${state.last_error}; next try ${state.due_at}`
    : '';
  const fixError =
    'Make port 80 of each name reach Posthorn’s HTTP listener (HTTP-01), check the names’ DNS records point at this machine, and read the error above; Posthorn retries on its own.';
  if (!state?.cert) {
    if (state?.last_error) return fail(name, `no ACME certificate yet from ${directory}${failing}`, fixError);
    return warn(
      name,
      `no ACME certificate yet from ${directory} (asked for at start, for ${state?.names.join(', ') ?? 'the public_url host and smtp.hostname'})`,
      'Wait a minute after start, or run posthorn serve with port 80 reachable; the SMTP listeners serve a self-signed certificate until then.',
    );
  }
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(state.cert);
  } catch (e) {
    return fail(name, `the stored ACME certificate is not readable (${(e as Error).message})`, fixError);
  }
  const days = Math.floor((Date.parse(cert.validTo) - now) / DAY);
  const evidence = `ACME certificate from ${directory} for ${state.names.join(', ')}, ${days < 0 ? `expired ${-days} days ago` : `expires in ${days} days`} (${cert.validTo}), renewal due ${state.due_at}${failing}`;
  if (days < 7) return fail(name, evidence, fixError);
  if (cert.checkHost(host) === undefined)
    return fail(
      name,
      `${evidence}; it does not name ${host}`,
      'Set smtp.hostname to a public DNS name pointing at this machine; the next renewal asks for it.',
    );
  if (days < 21 || state.last_error) return warn(name, evidence, state.last_error ? fixError : 'Nothing to do yet: Posthorn renews it on its own.');
  return pass(name, evidence);
}
