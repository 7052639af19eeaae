// The Inbox Agent (docs/api.md §25.10): on each new message of an inbox whose agent has
// instructions and actions, the operator's model (chat-completions.ts) is asked what to do, and
// the replies and forwards it writes become drafts — it never sends. A back office worker on the
// shared due-work loop (a DueService, work/due-service.ts), off the intake path:
//
//   queue   — `queueAgentRun`, in the unit of work that stores the message (the inbox part's
//             "message added" hook): a run record (`queued`) and an `agentDue` entry due now.
//             Nothing else: intake never waits for the model, and a model down or slow never
//             fails it.
//   claim   — one unit of work: each due run is checked against its team's daily budget
//             (`over_budget`: the model is not asked), counted as an attempt, marked `running` and
//             moved to the end of its lease (`agent.timeout_ms` and a minute): a crash mid-run
//             leaves it due again, and it is taken again, MAX_ATTEMPTS times at most.
//   attempt — no writes: the inbox's settings and the thread read (agent off, thread gone or in
//             spam or trash: `skipped`), the prompt made (agent-prompt.ts), the model asked.
//   settle  — a `draft_reply` or `forward_thread` becomes a draft through the inbox part's own
//             draft function (its unit of work: checks and `inbox.draft.created` written once);
//             then one unit of work: the run, still the one claimed, gets its outcome, with the
//             thread actions. Taken again after a crash between the two, a reply finds its draft
//             (an email has one unsent reply draft, docs/api.md §25.6).
//
// Actions other than drafts (labels, assignment, folders) are recorded as the model proposed
// them, and carried out only where the inbox part gives the agent a way to (`AgentInboxes`).
import type { AgentRunAction, AgentRunRec, AgentRunStatus, Store, Tx } from '../store';
import { newId, nowIso, uuidAt } from '../ids';
import { log } from '../log';
import { DueService } from '../work/due-service';
import type { ChatAnswer, ChatMessage } from './chat-completions';
import { agentPrompt, promptChars, readDecision, type AgentSettings, type AgentThread, type Proposed } from './agent-prompt';

/** Asks the model (chat-completions.ts `ChatCompletions`; a fake in tests). */
export interface Model {
  complete(messages: ChatMessage[]): Promise<ChatAnswer>;
}

/** A draft the agent asks the inbox part to make (never to send). */
export interface AgentDraft {
  inbox_id: string;
  thread_id: string;
  /** A reply: to the new message. A forward: null, with `to` set. */
  reply_to_email_id: string | null;
  to: string[] | null;
  subject: string | null;
  text: string;
}

/**
 * What the agent reads of an inbox and asks of it: the inbox part's functions, wired where the
 * back office is made (backoffice/parts.ts).
 */
export interface AgentInboxes {
  /** The inbox's agent settings and address; null when the inbox is gone. */
  settings(team: string, inboxId: string): Promise<AgentSettings | null>;
  /** The thread's folder and messages (oldest first); null when it is gone. */
  thread(team: string, threadId: string): Promise<(AgentThread & { folder: string }) | null>;
  /**
   * Make a draft (the inbox part's own function, its own unit of work, `inbox.draft.created`);
   * resolves with its id — an unsent reply draft of the same email already there is the one.
   */
  createDraft(team: string, draft: AgentDraft): Promise<string>;
  /** Carry out a thread action (labels, assignment, folder) in the settle's unit of work; absent or false: recorded only. */
  applyAction?(tx: Tx, team: string, threadId: string, action: Proposed): Promise<boolean>;
}

export interface AgentDeps {
  store: Store;
  inboxes: AgentInboxes;
  /** Null: `agent.url` is unset, no run is queued. */
  model: Model | null;
  config: { timeout_ms: number; daily_budget: number };
  now?: () => number;
}

/** Times a run is taken before it is failed (a crash, or a stop, cut the earlier ones short). */
export const MAX_ATTEMPTS = 3;
/** Beyond the model's timeout, how long a taken run is the worker's own before it is due again. */
const LEASE_SLACK_MS = 60_000;
const DAY_MS = 86_400_000;

/** Statuses of runs that asked the model (what the daily budget counts). */
const ASKED = new Set<AgentRunStatus>(['running', 'drafted', 'no_action', 'timeout', 'failed']);

/** An agent run is queued for a new inbox message, in the unit of work that stores it. */
export function queueAgentRun(tx: Tx, m: { team: string; inbox_id: string; thread_id: string; email_id: string }, now = Date.now()): AgentRunRec {
  const run: AgentRunRec = {
    id: newId(),
    team_id: m.team,
    created_at: new Date(now).toISOString(),
    inbox_id: m.inbox_id,
    thread_id: m.thread_id,
    email_id: m.email_id,
    status: 'queued',
    attempts: 0,
    due: now,
    prompt_chars: null,
    prompt_tokens: null,
    completion_tokens: null,
    draft_id: null,
    actions: [],
    error: null,
    duration_ms: null,
    started_at: null,
    finished_at: null,
  };
  tx.agentRuns.put(run);
  tx.agentDue.add(now, m.team, run.id);
  return run;
}

/** Whether an inbox's agent acts at all (Resend: once it has instructions and at least one action). */
export const agentActive = (s: Pick<AgentSettings, 'instructions' | 'actions'> | null) => !!s?.instructions?.trim() && (s?.actions.length ?? 0) > 0;

interface Claimed {
  team: string;
  id: string;
  due: number;
}

type Outcome =
  | { kind: 'stale' }
  | { kind: 'skipped'; why: string }
  | { kind: 'failed'; status: 'timeout' | 'failed'; error: string; prompt_chars: number | null; duration_ms: number | null }
  | {
      kind: 'decided';
      actions: Proposed[];
      dropped: number;
      prompt_chars: number;
      prompt_tokens: number | null;
      completion_tokens: number | null;
      duration_ms: number;
      subject: string;
      /** The new message as a forward quotes it. */
      forwarded: string;
    };

export class InboxAgent extends DueService<Claimed, Outcome> {
  private readonly now: () => number;

  constructor(
    private readonly deps: AgentDeps,
    opts: { concurrency?: number } = {},
  ) {
    // A few at once: each holds a request to the operator's model, often one local GPU.
    super({ name: 'agent', concurrency: opts.concurrency ?? 4, graceMs: 5_000 });
    this.now = deps.now ?? Date.now;
  }

  protected nextDue(): Promise<number | null> {
    return this.deps.store.agentDue.nextDue();
  }

  protected key(c: Claimed): string {
    return c.id;
  }

  protected async claim(max: number, busy: ReadonlySet<string>): Promise<Claimed[]> {
    const { store, config } = this.deps;
    const now = this.now();
    const lease = now + config.timeout_ms + LEASE_SLACK_MS;
    return store.write(async (tx) => {
      const taken: Claimed[] = [];
      const spent = new Map<string, number>();
      for (const d of await tx.agentDue.due(now, max + busy.size)) {
        if (taken.length >= max) break;
        if (busy.has(d.id)) continue;
        const run = await tx.agentRuns.get(d.team, d.id);
        tx.agentDue.remove(d.due, d.team, d.id);
        // An entry whose run is gone or moved on (a second node took it) is dropped.
        if (!run || run.due !== d.due || (run.status !== 'queued' && run.status !== 'running')) continue;
        if (run.attempts >= MAX_ATTEMPTS) {
          tx.agentRuns.put(finished(run, 'failed', { error: `the run was interrupted ${run.attempts} times (a restart or a crash while it ran)` }));
          continue;
        }
        if (run.status === 'queued' && config.daily_budget > 0) {
          const used = spent.get(d.team) ?? (await usedToday(tx, d.team, now, config.daily_budget));
          if (used >= config.daily_budget) {
            tx.agentRuns.put(finished(run, 'over_budget', { error: `the team's ${config.daily_budget} runs of this UTC day are spent (agent.daily_budget)` }));
            spent.set(d.team, used);
            continue;
          }
          spent.set(d.team, used + 1);
        }
        tx.agentRuns.put({ ...run, status: 'running', attempts: run.attempts + 1, due: lease, started_at: new Date(now).toISOString() });
        tx.agentDue.add(lease, d.team, d.id);
        taken.push({ team: d.team, id: d.id, due: lease });
      }
      return taken;
    });
  }

  protected async attempt(c: Claimed): Promise<Outcome> {
    const { store, inboxes, model } = this.deps;
    try {
      const run = await store.agentRuns.get(c.team, c.id);
      if (!run || run.due !== c.due || run.status !== 'running') return { kind: 'stale' };
      if (!model) return { kind: 'skipped', why: 'the agent is off (agent.url is unset)' };
      const settings = await inboxes.settings(c.team, run.inbox_id);
      if (!settings) return { kind: 'skipped', why: 'the inbox is gone' };
      if (!agentActive(settings)) return { kind: 'skipped', why: 'the inbox agent has no instructions or no actions' };
      const thread = await inboxes.thread(c.team, run.thread_id);
      if (!thread?.messages.some((m) => m.id === run.email_id)) return { kind: 'skipped', why: 'the thread or the message is gone' };
      if (thread.folder === 'spam' || thread.folder === 'trash') return { kind: 'skipped', why: `the thread is in ${thread.folder}` };
      const prompt = agentPrompt(settings, thread, run.email_id);
      const chars = promptChars(prompt);
      const started = performance.now();
      const answer = await model.complete(prompt);
      const duration_ms = Math.round(performance.now() - started);
      if (!answer.ok)
        return { kind: 'failed', status: answer.failure === 'timeout' ? 'timeout' : 'failed', error: answer.error, prompt_chars: chars, duration_ms };
      const decision = readDecision(answer.content, settings.actions);
      if ('error' in decision) return { kind: 'failed', status: 'failed', error: decision.error, prompt_chars: chars, duration_ms };
      return {
        kind: 'decided',
        ...decision,
        prompt_chars: chars,
        prompt_tokens: answer.prompt_tokens,
        completion_tokens: answer.completion_tokens,
        duration_ms,
        subject: thread.subject,
        forwarded: forwardedText(thread.messages.find((m) => m.id === run.email_id)!),
      };
    } catch (e) {
      return { kind: 'failed', status: 'failed', error: String((e as Error)?.message ?? e), prompt_chars: null, duration_ms: null };
    }
  }

  protected async settle(c: Claimed, r: Outcome): Promise<void> {
    const { store, inboxes } = this.deps;
    if (r.kind === 'stale') return;
    const claimed = (run: AgentRunRec | undefined): run is AgentRunRec => !!run && run.due === c.due && run.status === 'running';
    const drafts: { type: 'draft_reply' | 'forward_thread'; id: string | null; detail: string | null }[] = [];
    let draftError: string | null = null;
    const run = await store.agentRuns.get(c.team, c.id);
    if (r.kind === 'decided' && claimed(run)) {
      for (const a of r.actions) {
        if (a.type !== 'draft_reply' && a.type !== 'forward_thread') continue;
        const draft: AgentDraft =
          a.type === 'draft_reply'
            ? { inbox_id: run.inbox_id, thread_id: run.thread_id, reply_to_email_id: run.email_id, to: null, subject: null, text: a.text }
            : {
                inbox_id: run.inbox_id,
                thread_id: run.thread_id,
                reply_to_email_id: null,
                to: [a.to],
                subject: `Fwd: ${r.subject}`,
                text: a.text ? `${a.text}\n\n${r.forwarded}` : r.forwarded,
              };
        try {
          drafts.push({ type: a.type, id: await inboxes.createDraft(c.team, draft), detail: a.type === 'forward_thread' ? a.to : null });
        } catch (e) {
          drafts.push({ type: a.type, id: null, detail: a.type === 'forward_thread' ? a.to : null });
          draftError = `the draft could not be made: ${(e as Error)?.message ?? e}`;
        }
      }
    }
    await store.write(async (tx) => {
      const run = await tx.agentRuns.get(c.team, c.id);
      // Taken again meanwhile (its lease ran out): that attempt records its own outcome.
      if (!claimed(run)) return;
      tx.agentDue.remove(c.due, c.team, c.id);
      if (r.kind === 'skipped') return tx.agentRuns.put(finished(run, 'skipped', { error: r.why }));
      if (r.kind === 'failed') return tx.agentRuns.put(finished(run, r.status, { error: r.error, prompt_chars: r.prompt_chars, duration_ms: r.duration_ms }));
      const actions: AgentRunAction[] = drafts.map((d) => ({ type: d.type, applied: d.id !== null, detail: d.detail }));
      for (const a of r.actions) {
        if (a.type === 'draft_reply' || a.type === 'forward_thread') continue;
        const applied = inboxes.applyAction ? await inboxes.applyAction(tx, c.team, run.thread_id, a) : false;
        actions.push({ type: a.type, applied, detail: detailOf(a) });
      }
      const draft_id = drafts.find((d) => d.id !== null)?.id ?? null;
      const dropped = r.dropped ? `${r.dropped} action${r.dropped === 1 ? '' : 's'} of the answer dropped (not allowed, or missing a field)` : null;
      tx.agentRuns.put(
        finished(run, draft_id ? 'drafted' : draftError ? 'failed' : 'no_action', {
          draft_id,
          actions,
          prompt_chars: r.prompt_chars,
          prompt_tokens: r.prompt_tokens,
          completion_tokens: r.completion_tokens,
          duration_ms: r.duration_ms,
          error: [draftError, dropped].filter(Boolean).join('; ') || null,
        }),
      );
    });
    log.info('agent.run', { team: c.team, run: c.id, outcome: r.kind });
  }
}

/** The new message as a forward quotes it (as mail clients do). */
function forwardedText(m: AgentThread['messages'][number]): string {
  return [
    '---------- Forwarded message ---------',
    `From: ${m.from}`,
    `Date: ${m.created_at}`,
    `Subject: ${m.subject}`,
    `To: ${m.to.join(', ')}`,
    '',
    m.text,
  ].join('\n');
}

const detailOf = (a: Proposed): string | null => (a.type === 'add_labels' ? a.labels.join(', ') : a.type === 'assign_thread' ? a.to : null);

function finished(run: AgentRunRec, status: AgentRunStatus, fields: Partial<AgentRunRec>): AgentRunRec {
  return { ...run, ...fields, status, due: null, finished_at: nowIso() };
}

/** Runs of the team that asked the model this UTC day (counted up to `budget`: no more is needed). */
async function usedToday(tx: Tx, team: string, now: number, budget: number): Promise<number> {
  const dayStart = now - (now % DAY_MS);
  const page = await tx.agentRuns.page(team, { before: uuidAt(dayStart), limit: budget }, null, (r) => (ASKED.has(r.status) ? r : undefined));
  return page.data.length;
}
