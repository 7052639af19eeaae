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
