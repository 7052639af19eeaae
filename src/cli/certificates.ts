// `serve`'s certificates by ACME (docs/mail.md §4, "Certificates by ACME"): the stored certificate loaded before the
// listeners take traffic, the HTTPS listeners started (with the SMTP listeners' self-signed
// certificate until the first ACME one is issued), every certificate put in service handed to the
// SMTP and HTTPS listeners, and the first check started at once rather than at the next minute.
import type { Services } from '../services';
import type { SmtpListeners } from '../smtp';
import { smtpCertificate } from '../smtp/certificate';
import { startHttps, type HttpsListeners } from '../api/https';
import { log } from '../log';

export interface Certificates {
  https: HttpsListeners | null;
  /** The first check (issuance, when nothing is stored yet): tests wait for it. */
  first: Promise<void>;
  stop(force?: boolean): Promise<void>;
}

export async function startCertificates(svc: Services, smtp: SmtpListeners): Promise<Certificates | null> {
  const acme = svc.acme;
  if (!acme) return null;
  await acme.load();
  const ports = svc.config.tls.acme.https_ports;
  const https = ports.length ? startHttps(svc, acme.current() ?? (await smtpCertificate(svc.config))) : null;
  let first = true;
  acme.onCertificate((c) => {
    smtp.useCertificate(c);
    // The HTTPS listeners just started with the current one.
    if (!first) https?.useCertificate(c);
  });
  first = false;
  const check = acme.tick().catch((e) => log.error('acme.check_failed', { error: String(e) }));
  return {
    https,
    first: check,
    async stop(force = false) {
      await https?.stop(force);
    },
  };
}
