// The composer of the Inboxes page: a reply, a forward or a new email, kept as a draft of the
// inbox (docs/api.md §25, the drafts routes) that saves as you type — one POST for the first words,
// then one PATCH per pause (editor/autosave.ts) — so a teammate, a reload or another device finds it.
// A reply or a new email is sent as its draft (POST …/drafts/{id}/send: the server sets In-Reply-To,
// References and the quote); a forward goes through POST …/emails/{id}/forward, which also sends the
// original's attachments, and its draft is then removed.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, del, patch, post, url } from '../api';
import { useAutosave } from '../editor/autosave';
import { ErrorBox, Field, notify, useAction, useLeaveWarning, val } from '../ui';
import type { InboxDraft, InboxMessage } from '../../../src/schemas/inboxes';

export type ComposeMode = 'reply' | 'forward' | 'new';

/** What the composer was opened for: a message of a thread (reply, forward), or nothing (new). */
export interface Compose {
  mode: ComposeMode;
  threadId?: string;
  email?: InboxMessage;
  /** A draft saved before (reopened from the thread or the drafts list). */
  draft?: InboxDraft;
  /** Opened by the user (a button, a shortcut): the message field takes the focus. A draft found on opening a thread does not. */
  focus?: boolean;
}

const list = (s: string): string[] =>
  s
    .split(/[,;\n]/)
    .map((x) => x.trim())
    .filter(Boolean);

/** The subject of a reply or forward of `subject` (one prefix, not one per round). */
export function prefixed(prefix: 'Re' | 'Fwd', subject: string | null): string {
  const s = subject ?? '';
  return new RegExp(`^${prefix}:`, 'i').test(s) ? s : `${prefix}: ${s}`.trim();
}

/** Whom a reply goes to: the message's Reply-To, else its sender (RFC 5322 §3.6.3). */
export const replyTarget = (m: InboxMessage): string => (m.reply_to.length ? m.reply_to.join(', ') : m.from);

export function Composer({ inboxId, compose, onClose, onSent }: { inboxId: string; compose: Compose; onClose: () => void; onSent: () => void }) {
  const { mode, email, draft } = compose;
  const [to, setTo] = useState(draft?.to?.join(', ') ?? '');
  const [cc, setCc] = useState(draft?.cc.join(', ') ?? '');
  const [subject, setSubject] = useState(draft?.subject ?? (mode === 'forward' ? prefixed('Fwd', email?.subject ?? null) : ''));
  const [text, setText] = useState(draft?.text ?? '');
  const draftId = useRef<string | null>(draft?.id ?? null);
  const form = { to, cc, subject, text };

  /** Discarded or sent: nothing more to save. */
  const done = useRef(false);
  const save = async (f: typeof form) => {
    if (done.current) return;
    const fields = {
      cc: list(f.cc),
      text: f.text,
      ...(mode === 'reply' ? {} : { to: list(f.to), subject: f.subject }),
    };
    if (draftId.current) {
      await patch(url('/inboxes/:inbox/drafts/:draft', { inbox: inboxId, draft: draftId.current }), fields);
      return;
    }
    // A reply's draft belongs to its thread and message; a forward's and a new email's stand alone.
    const made = await post(
      url('/inboxes/:inbox/drafts', { inbox: inboxId }),
      mode === 'reply' ? { ...fields, thread_id: compose.threadId, reply_to_email_id: email!.id } : fields,
    );
    draftId.current = made.id;
  };
  const autosave = useAutosave(form, save, 800);
  // Closed or left for another thread before the pause ended: what was typed is saved all the same.
  const flushRef = useRef(autosave.flush);
  flushRef.current = autosave.flush;
  useEffect(() => () => void flushRef.current().catch(() => {}), []);
  useLeaveWarning(autosave.dirty, 'Your draft has changes not saved yet. Leave and lose them?');

  const send = useAction(async () => {
    await autosave.flush();
    if (mode === 'forward') {
      await post(url('/inboxes/:inbox/threads/:thread/emails/:email/forward', { inbox: inboxId, thread: compose.threadId!, email: email!.id }), {
        to: list(to),
        cc: list(cc).length ? list(cc) : undefined,
        subject: subject || undefined,
        text: text || undefined,
      });
      if (draftId.current) await del(url('/inboxes/:inbox/drafts/:draft', { inbox: inboxId, draft: draftId.current })).catch(() => {});
      notify('Forwarded.');
    } else {
      if (!draftId.current) throw new ApiFailure(0, 'empty_draft', 'Write something first.');
      await post(url('/inboxes/:inbox/drafts/:draft/send', { inbox: inboxId, draft: draftId.current }));
      notify(mode === 'reply' ? 'Reply sent.' : 'Email sent.');
    }
    done.current = true;
    onSent();
  });
  const discard = useAction(async () => {
    done.current = true;
    if (draftId.current) await del(url('/inboxes/:inbox/drafts/:draft', { inbox: inboxId, draft: draftId.current }));
    draftId.current = null;
    notify('Draft discarded.');
    onClose();
  });

  // Opened by the user, the first field to write in takes the focus (once): a reply is begun by typing.
  const focusOnce = (el: HTMLElement | null) => {
    if (el && compose.focus && !el.dataset.focused) {
      el.dataset.focused = '1';
      el.focus();
    }
  };
  const title = mode === 'reply' ? 'Reply' : mode === 'forward' ? 'Forward' : 'New email';
  const status = { saved: draftId.current ? 'Draft saved' : '', unsaved: 'Unsaved changes', saving: 'Saving…', failed: 'Not saved' }[autosave.state];
  return (
    <section class="composer card" aria-label={title}>
      <div class="composer-head">
        <h2>{title}</h2>
        <span class="small muted" role="status" aria-live="polite">
          {status}
        </span>
      </div>
      <ErrorBox error={send.error ?? discard.error ?? (autosave.error as ApiFailure | null)} />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void send.run();
        }}
      >
        {mode === 'reply' && email && (
          <p class="small composer-to">
            <span class="muted">To</span> {replyTarget(email)}
          </p>
        )}
        {mode !== 'reply' && (
          <Field id="compose-to" label="To">
            <input id="compose-to" type="text" inputMode="email" required value={to} onInput={(e) => setTo(val(e))} autoComplete="off" ref={focusOnce} />
          </Field>
        )}
        <Field id="compose-cc" label="Cc">
          <input id="compose-cc" type="text" inputMode="email" value={cc} onInput={(e) => setCc(val(e))} autoComplete="off" />
        </Field>
        {mode !== 'reply' && (
          <Field id="compose-subject" label="Subject">
            <input id="compose-subject" value={subject} onInput={(e) => setSubject(val(e))} />
          </Field>
        )}
        <Field id="compose-text" label="Message">
          <textarea
            id="compose-text"
            rows={8}
            value={text}
            required={mode !== 'forward'}
            onInput={(e) => setText(val(e))}
            ref={mode === 'reply' ? focusOnce : undefined}
          />
        </Field>
        {mode === 'forward' && <p class="small muted">The original message and its attachments are sent below your note.</p>}
        <div class="composer-actions">
          <button type="submit" class="btn primary" disabled={send.busy}>
            {send.busy ? 'Sending…' : 'Send'}
          </button>
          <button type="button" class="btn" onClick={onClose}>
            Close
          </button>
          <button type="button" class="btn ghost danger" disabled={discard.busy} onClick={() => void discard.run()}>
            Discard draft
          </button>
        </div>
      </form>
    </section>
  );
}
