// Posthorn's own mail to dashboard users (accounts/system-mail.ts), through the one sending core:
// `prepare` → `commit`, as the team that has `auth.system_from`'s domain verified — the operator's
// team — so it is DKIM-signed, queued, retried and logged like every email (README "Mail Posthorn
// sends itself"). Until a team has that domain, nothing is sent and `send` resolves false.
import type { SystemMail, SystemMessage } from '../accounts/system-mail';
import { SYSTEM_TAG } from '../mail/system';
import { parseAddress } from '../mail/address';
import { canSendFrom } from '../domains/records';
import { log } from '../log';
import { commit, prepare, type SendingDeps } from './submit';

export class SystemSender implements SystemMail {
  constructor(
    private readonly deps: SendingDeps,
    readonly from: string,
  ) {}

  async send(m: SystemMessage): Promise<boolean> {
    const domain = parseAddress(this.from)?.domain;
    const d = domain ? await this.deps.store.domains.find('name', domain) : undefined;
    if (!d || !canSendFrom(d)) {
      log.warn('system_mail.not_sent', { kind: m.kind, reason: `no team has the domain of auth.system_from (${domain}) verified` });
      return false;
    }
    try {
      const p = await prepare(
        this.deps,
        { team: d.team_id, key: null },
        { from: this.from, to: m.to, subject: m.subject, html: m.html, text: m.text, tags: [{ name: SYSTEM_TAG, value: m.kind }] },
      );
      // Never tracked: a click event would carry the link, which is the addressee's secret.
      if (p.content.message) p.content.message.tracking = { open: false, click: false };
      await commit(this.deps, [p]);
      return true;
    } catch (e) {
      // The sending team's limits, an address the core refuses: the caller says it was not sent.
      log.warn('system_mail.not_sent', { kind: m.kind, reason: (e as Error).message });
      return false;
    }
  }
}
