// `template` on a send (docs/api.md §20.4), for every way in that calls `prepare` — POST /emails,
// each batch item, anything else: the published template, rendered with the request's variables,
// becomes the send's subject, html and text before the rest of the checks run. The request's
// `from`, `subject` and `reply_to` win over the template's; `html` and `text` may not be given.
import { given } from '../schemas/common';
import type { StoreReader } from '../store';
import { renderForSend, sendTemplate, bodyWithTemplate } from '../templates';
import type { SendEmailRequest } from '../schemas/emails';

/**
 * The send `input` stands for, and the template it used (null without one). `system` values fill
 * names a request may not give (`RESEND_UNSUBSCRIBE_URL` of an automation email, docs/api.md §24.5).
 */
export async function applyTemplate(
  r: StoreReader,
  team: string,
  input: SendEmailRequest,
  system: Record<string, string> = {},
): Promise<{ input: SendEmailRequest; templateId: string | null }> {
  if (!given(input.template)) return { input, templateId: null };
  // `react` never reaches a server (the SDK renders it to html), but a plain client may send it.
  for (const field of ['html', 'text', 'react'] as const) if (given(input[field])) throw bodyWithTemplate(field);
  const { ref, variables } = sendTemplate(input.template);
  const t = await renderForSend(r, team, ref, { ...variables, ...system });
  const { template: _, ...rest } = input;
  const or = <K extends 'from' | 'subject' | 'reply_to'>(field: K, fallback: SendEmailRequest[K]) =>
    given(input[field]) ? input[field] : (fallback ?? undefined);
  return {
    templateId: t.template_id,
    input: {
      ...rest,
      from: or('from', t.from),
      subject: or('subject', t.subject),
      reply_to: or('reply_to', t.reply_to),
      html: t.html,
      // null: derived from the html, as for any send; "" = no text part.
      text: t.text ?? undefined,
    },
  };
}
