// One conversation of an inbox: its messages (HTML in the sandboxed frame of pages/preview.tsx,
// remote images off until asked), its folder, labels, read state and assignee, and the composer.
import { useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { del, get, page, patch, post, url } from '../api';
import { useCan } from '../role';
import { Badge, bytes, Dialog, ErrorBox, Loading, Time, useAction, useGet, val } from '../ui';
import type { InboxMessage, InboxThreadSummary, ThreadLabel } from '../../../src/schemas/inboxes';
import { EmailPreview } from './preview';
import { type Compose, Composer } from './inbox-composer';
import { FOLDER_NAMES, type Folder } from './inbox-data';
import { useLive } from '../live';
import { Swatch } from './inboxes';

/** The display name of an address (`Ada <ada@example.org>`: Ada), else the address itself. */
export function personName(addr: string): string {
  const m = /^\s*"?([^"<]*?)"?\s*<([^>]+)>\s*$/.exec(addr);
  return (m?.[1] || m?.[2] || addr).trim();
}

/** A paperclip: the conversation or message has attachments. */
export function Paperclip({ label }: { label: string }) {
  return (
    <svg class="paperclip" viewBox="0 0 16 16" width="14" height="14" role="img" aria-label={label}>
      <path
        d="M11 4.5 5.6 9.9a1.4 1.4 0 0 0 2 2l5.5-5.6a2.8 2.8 0 0 0-4-4L3.6 7.8a4.2 4.2 0 0 0 6 6L14 9.3"
        fill="none"
        stroke="currentColor"
        stroke-width="1.4"
        stroke-linecap="round"
      />
    </svg>
  );
}

/** A thread's labels as chips; with `onRemove`, each with its remove button. */
export function LabelChips({ labels, onRemove }: { labels: ThreadLabel[]; onRemove?: (l: ThreadLabel) => void }) {
  if (!labels.length) return null;
  return (
    <span class="label-chips">
      {labels.map((l) => (
        <span class="label-chip" key={l.id}>
          <Swatch color={l.color} />
          {l.name}
          {onRemove && (
            <button type="button" class="chip-remove" aria-label={`Remove label ${l.name}`} onClick={() => onRemove(l)}>
              ×
            </button>
          )}
        </span>
      ))}
    </span>
  );
}

/** What the mailbox hands a thread: the moves and state changes the keyboard shortcuts share. */
export interface ThreadActions {
  move: (folder: Folder) => void;
  setRead: (read: boolean) => void;
  /** A teammate's address, or null: nobody. */
  assign: (assignee: string | null) => void;
  /** Delete the thread with its messages (asked first). */
  remove: () => void;
  busy: boolean;
}

/** Whom the thread is assigned to, chosen among the team's members (docs/api.md §25.4, Posthorn's `assignee`). */
function AssignSelect({ assignee, busy, onAssign }: { assignee: string | null; busy: boolean; onAssign: (a: string | null) => void }) {
  const members = useGet('/team/members');
  const emails = (members.data?.data ?? []).map((m) => m.email);
  // Someone no longer in the team stays shown until the thread is given to another.
  if (assignee && !emails.includes(assignee)) emails.push(assignee);
  return (
    <select class="assign-select" aria-label="Assigned to" value={assignee ?? ''} disabled={busy || !members.data} onChange={(e) => onAssign(val(e) || null)}>
      <option value="">Unassigned</option>
      {emails.map((e) => (
        <option value={e}>Assigned to {e}</option>
      ))}
    </select>
  );
}

export function ThreadView({
  inboxId,
  threadId,
  compose,
  setCompose,
  actions,
  onChanged,
  back,
  version,
}: {
  inboxId: string;
  threadId: string;
  /** Changed by the mailbox after it changed this thread (moved, read, assigned): read it again. */
  version: number;
  compose: Compose | null;
  setCompose: (c: Compose | null) => void;
  actions: ThreadActions;
  onChanged: () => void;
  back: ComponentChildren;
}) {
  const summary = useGet(url('/inboxes/:inbox/threads/:thread', { inbox: inboxId, thread: threadId }));
  const emails = useGet(url('/inboxes/:inbox/threads/:thread/emails', { inbox: inboxId, thread: threadId, limit: 100 }));
  const [labelling, setLabelling] = useState(false);
  const member = useCan('member');
  const reload = () => {
    summary.reload();
    emails.reload();
    onChanged();
  };
  // A teammate's change, or a new message of the customer's, shows without a reload (docs/api.md §19.15).
  useLive(
    ['inbox_thread'],
    () => {
      summary.reload();
      emails.reload();
    },
    threadId,
  );
  useEffect(() => {
    if (version) summary.reload();
  }, [version]);
  // Opened, it is read: as in every mail client, and the unread counts follow.
  useEffect(() => {
    const t = summary.data;
    if (!t || t.read || !member) return;
    void patch(url('/inboxes/:inbox/threads/:thread', { inbox: inboxId, thread: threadId }), { read: true }).then(reload, () => {});
  }, [summary.data?.id]);
  // A reply drafted before (by a teammate, the agent, another tab) opens in the composer.
  const messages0 = emails.data?.data;
  useEffect(() => {
    if (!messages0 || compose?.threadId === threadId) return;
    let live = true;
    void (async () => {
      const all = await get(url('/inboxes/:inbox/drafts', { inbox: inboxId, limit: 100 }));
      const item = all.data.find((d) => d.thread_id === threadId && d.type === 'reply');
      const email = item && messages0.find((m) => m.id === item.reply_to_email_id);
      if (!item || !email || !live) return;
      const draft = await get(url('/inboxes/:inbox/drafts/:draft', { inbox: inboxId, draft: item.id }));
      if (live) setCompose({ mode: 'reply', threadId, email, draft });
    })().catch(() => {});
    return () => {
      live = false;
    };
  }, [!!messages0]);
  const unlabel = useAction(async (l: ThreadLabel) => {
    await del(url('/inboxes/:inbox/threads/:thread/labels/:label', { inbox: inboxId, thread: threadId, label: l.id }));
    reload();
  });
  if (summary.error) return <ErrorBox error={summary.error} />;
  if (!summary.data || !emails.data) return <Loading />;
  const t = summary.data;
  const messages = emails.data.data;
  const last = messages[messages.length - 1];
  const lastInbound = [...messages].reverse().find((m) => m.direction === 'inbound') ?? last;
  // A reply already open (a draft found, or begun) is taken up again, not started over.
  const startReply = () => {
    if (compose?.mode === 'reply' && compose.threadId === threadId) document.getElementById('compose-text')?.focus();
    else if (lastInbound) setCompose({ mode: 'reply', threadId, email: lastInbound, focus: true });
  };
  return (
    <article class="thread" aria-labelledby="thread-subject">
      <div class="thread-head">
        {back}
        <h2 id="thread-subject">{t.subject || '(no subject)'}</h2>
        <div class="thread-tags">
          <Badge value="none" label={FOLDER_NAMES[t.folder]} />
          <LabelChips labels={t.labels} onRemove={member ? (l) => void unlabel.run(l) : undefined} />
          {t.assignee && <span class="small muted">Assigned to {t.assignee}</span>}
        </div>
      </div>
      {member && (
        <div class="thread-toolbar" role="toolbar" aria-label="Conversation actions">
          {lastInbound && (
            <button type="button" class="btn small" aria-keyshortcuts="r" onClick={startReply}>
              Reply
            </button>
          )}
          {last && (
            <button type="button" class="btn small" aria-keyshortcuts="f" onClick={() => setCompose({ mode: 'forward', threadId, email: last, focus: true })}>
              Forward
            </button>
          )}
          {t.folder !== 'archive' && t.folder !== 'sent' && (
            <button type="button" class="btn small" aria-keyshortcuts="e" disabled={actions.busy} onClick={() => actions.move('archive')}>
              Archive
            </button>
          )}
          {t.folder !== 'inbox' && (
            <button type="button" class="btn small" disabled={actions.busy} onClick={() => actions.move('inbox')}>
              Move to inbox
            </button>
          )}
          {t.folder !== 'spam' && t.folder !== 'sent' && (
            <button type="button" class="btn small" disabled={actions.busy} onClick={() => actions.move('spam')}>
              Spam
            </button>
          )}
          {t.folder !== 'trash' && (
            <button type="button" class="btn small" aria-keyshortcuts="#" disabled={actions.busy} onClick={() => actions.move('trash')}>
              Trash
            </button>
          )}
          <button type="button" class="btn small" disabled={actions.busy} onClick={() => actions.setRead(!t.read)}>
            {t.read ? 'Mark unread' : 'Mark read'}
          </button>
          <button type="button" class="btn small" onClick={() => setLabelling(true)}>
            Labels
          </button>
          <AssignSelect assignee={t.assignee} busy={actions.busy} onAssign={actions.assign} />
          {t.folder === 'trash' && (
            <button type="button" class="btn small danger" disabled={actions.busy} onClick={actions.remove}>
              Delete forever
            </button>
          )}
        </div>
      )}
      <ErrorBox error={unlabel.error} />
      <ol class="messages">
        {messages.map((m, i) => (
          <MessageItem key={m.id} m={m} index={i} open={i === messages.length - 1 || !m.read} />
        ))}
      </ol>
      {compose && compose.threadId === threadId && (
        <Composer
          key={`${compose.mode} ${compose.email?.id ?? ''} ${compose.draft?.id ?? ''}`}
          inboxId={inboxId}
          compose={compose}
          onClose={() => setCompose(null)}
          onSent={() => {
            setCompose(null);
            reload();
          }}
        />
      )}
      {labelling && <LabelDialog inboxId={inboxId} thread={t} onClose={() => setLabelling(false)} onChanged={reload} />}
    </article>
  );
}

/** A frame tall enough for a short message, at most the preview's usual height (the frame scrolls past it). */
function frameHeight(m: InboxMessage): number {
  const text = m.text ?? m.html?.replace(/<[^>]+>/g, ' ') ?? '';
  const lines = text.split('\n').length + text.length / 90;
  return Math.round(Math.min(520, Math.max(140, lines * 22 + 60)));
}

function MessageItem({ m, index, open: initiallyOpen }: { m: InboxMessage; index: number; open: boolean }) {
  const [open, setOpen] = useState(initiallyOpen);
  useEffect(() => setOpen(initiallyOpen), [m.id]);
  const bodyId = `message-body-${m.id}`;
  return (
    <li class={`message ${m.direction}`}>
      <button type="button" class="message-head" aria-expanded={open} aria-controls={bodyId} onClick={() => setOpen(!open)}>
        <span class="message-from">
          <span>{personName(m.from)}</span>
          {personName(m.from) !== m.from && <span class="small muted message-address">{m.from.replace(/^[^<]*</, '<')}</span>}
          {m.direction === 'outbound' && <span class="badge blue">Sent</span>}
        </span>
        <span class="message-date small muted">
          <Time iso={m.received_at} />
        </span>
        {!open && <span class="message-snippet small muted">{(m.text ?? '').slice(0, 140)}</span>}
      </button>
      {open && (
        <div class="message-body" id={bodyId}>
          <p class="small muted message-rcpt">
            To {m.to.join(', ')}
            {m.cc.length > 0 && <> · Cc {m.cc.join(', ')}</>}
          </p>
          {m.html ? (
            <EmailPreview html={m.html} height={frameHeight(m)} title={`Message ${index + 1} from ${m.from}`} />
          ) : (
            <div class="message-text">{m.text ?? ''}</div>
          )}
          {m.attachments.length > 0 && (
            <ul class="plain attachments small">
              {m.attachments.map((a) => (
                <li key={a.id}>
                  <Paperclip label="Attachment" /> {a.filename ?? '(unnamed)'} {a.size != null && <span class="muted">{bytes(a.size)}</span>}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </li>
  );
}

/** The inbox's labels as checkboxes: ticking one adds it to the thread, unticking removes it. */
function LabelDialog({ inboxId, thread, onClose, onChanged }: { inboxId: string; thread: InboxThreadSummary; onClose: () => void; onChanged: () => void }) {
  const labels = useGet(url('/inboxes/:inbox/labels', { inbox: inboxId }));
  const [on, setOn] = useState(new Set(thread.labels.map((l) => l.id)));
  // Ticked at once (the box shows what was asked); put back when the server refuses.
  const toggle = useAction(async (id: string, checked: boolean) => {
    const flip = (value: boolean) =>
      setOn((cur) => {
        const next = new Set(cur);
        if (value) next.add(id);
        else next.delete(id);
        return next;
      });
    flip(checked);
    try {
      if (checked) await post(url('/inboxes/:inbox/threads/:thread/labels', { inbox: inboxId, thread: thread.id }), { labels: [id] });
      else await del(url('/inboxes/:inbox/threads/:thread/labels/:label', { inbox: inboxId, thread: thread.id, label: id }));
    } catch (e) {
      flip(!checked);
      throw e;
    }
    onChanged();
  });
  return (
    <Dialog open title="Labels" onClose={onClose}>
      <ErrorBox error={labels.error ?? toggle.error} />
      {!labels.data && !labels.error && <Loading />}
      {labels.data && !labels.data.data.length && (
        <p class="muted">
          No labels yet. <a href={page`/dashboard/inboxes/${inboxId}/settings`}>Add some in the inbox's settings</a>.
        </p>
      )}
      {labels.data && labels.data.data.length > 0 && (
        <fieldset class="label-picks">
          <legend class="sr-only">Labels of this conversation</legend>
          {labels.data.data.map((l) => (
            <label class="check" key={l.id}>
              <input type="checkbox" checked={on.has(l.id)} onChange={(e) => void toggle.run(l.id, e.currentTarget.checked)} />
              <Swatch color={l.color} />
              {l.name}
            </label>
          ))}
        </fieldset>
      )}
      <div class="form-actions">
        <button type="button" class="btn primary" onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}
