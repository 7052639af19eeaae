// Runs of an automation as the API shows them (docs/api.md §24.7): a page of runs, filtered by
// status, and one run with its step history — each step's status, output or error, and times.
import type { AutomationRunRec, PageQuery, RunStatus, StoreReader } from '../store';
import { errors } from '../errors';

const STATUSES: RunStatus[] = ['running', 'completed', 'failed', 'cancelled'];

export const runSummary = (r: AutomationRunRec) => ({
  id: r.id,
  status: r.status,
  started_at: r.started_at,
  completed_at: r.completed_at,
  created_at: r.created_at,
});

export const runView = (r: AutomationRunRec) => ({
  object: 'automation_run' as const,
  ...runSummary(r),
  // Posthorn: whom the run is for.
  contact_id: r.contact_id,
  steps: r.steps.map((s) => ({
    key: s.key,
    type: s.type,
    status: s.status,
    output: s.output,
    error: s.error,
    started_at: s.started_at,
    completed_at: s.completed_at,
    created_at: s.created_at,
  })),
});

/** `status` of the runs list: one status or several, comma-separated (as the SDK sends an array). */
export function runStatuses(v: string | undefined): Set<RunStatus> | null {
  if (v === undefined) return null;
  const list = v.split(',').map((s) => s.trim());
  for (const s of list)
    if (!STATUSES.includes(s as RunStatus)) throw errors.validation(`The \`status\` parameter must be one or more of ${STATUSES.join(', ')}, comma-separated.`);
  return new Set(list as RunStatus[]);
}

/** A page of an automation's runs, newest first (the automation's existence is the caller's check). */
export function listRuns(r: StoreReader, team: string, automationId: string, q: PageQuery, statuses: Set<RunStatus> | null) {
  return r.automationRuns.pageBy('automation', automationId, team, q, 20, (run) => (statuses && !statuses.has(run.status) ? undefined : runSummary(run)));
}

/** One run of the automation, or undefined (another automation's run is none of this one's). */
export async function findRun(r: StoreReader, team: string, automationId: string, runId: string): Promise<AutomationRunRec | undefined> {
  const run = await r.automationRuns.get(team, runId);
  return run && run.automation_id === automationId ? run : undefined;
}
