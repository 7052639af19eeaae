// Runs of an automation as the API finds them (docs/api.md §24.7): the statuses a list asks for,
// and one run of an automation. What the API shows of them is the route's (src/api/resources/automations.ts).
import type { AutomationRunRec, RunStatus, StoreReader } from '../store';

/** `status` of the runs list: one status or several, comma-separated (the schema checked them), as a set; null: any. */
export function runStatuses(v: string | undefined): Set<RunStatus> | null {
  return v === undefined ? null : new Set(v.split(',').map((s) => s.trim() as RunStatus));
}

/** One run of the automation, or undefined (another automation's run is none of this one's). */
export async function findRun(r: StoreReader, team: string, automationId: string, runId: string): Promise<AutomationRunRec | undefined> {
  const run = await r.automationRuns.get(team, runId);
  return run && run.automation_id === automationId ? run : undefined;
}
