// The Inbox Agent's runs (docs/api.md §25.10): one record per new inbox message the agent was
// asked about — queued in the unit of work that stored the message, taken by the back office's
// agent worker (inboxes/agent.ts), and kept with what came of it: the prompt's size, the tokens the
// model counted, the draft it made, the actions it proposed, how long it took, or why it failed.
import type { Rec } from './interface';
import type { InboxAgentAction } from './inbox-records';

/**
 * Where a run stands: `queued` and `running` while it is work to do; then `drafted` (a draft was
 * made), `no_action` (the model saw nothing to do), `over_budget` (the team's daily budget was
 * spent: the model was not asked), `skipped` (nothing to ask about any more: the message or
 * thread is gone, the thread is spam, the agent was turned off), `timeout` or `failed`.
 */
export type AgentRunStatus = 'queued' | 'running' | 'drafted' | 'no_action' | 'over_budget' | 'skipped' | 'timeout' | 'failed';

/** One action the model proposed: whether it was carried out, and what it named (a label, an address). */
export interface AgentRunAction {
  type: InboxAgentAction;
  applied: boolean;
  detail: string | null;
}

export interface AgentRunRec extends Rec {
  inbox_id: string;
  thread_id: string;
  /** The new message the run is about. */
  email_id: string;
  status: AgentRunStatus;
  /** Taken by the worker so far (a run cut short by a crash is taken again, a few times at most). */
  attempts: number;
  /** Its due time while queued or running (the `agentDue` entry naming it); null once over. */
  due: number | null;
  /** Characters of the prompt sent (system and user messages). */
  prompt_chars: number | null;
  /** As the endpoint counted them (`usage`), when it did. */
  prompt_tokens: number | null;
  completion_tokens: number | null;
  draft_id: string | null;
  actions: AgentRunAction[];
  error: string | null;
  /** From the request to the model to its answer. */
  duration_ms: number | null;
  started_at: string | null;
  finished_at: string | null;
}
