// One finding of the doctor (docs/deliverability.md §1): a named check, its verdict, what was seen
// and the fix in one sentence. `posthorn doctor --json` and GET /deliverability/checks print these.
export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface CheckResult {
  /** Stable name: `smtp_hostname`, `ptr:203.0.113.7`, `spf:example.com`, `dnsbl:203.0.113.7`… */
  name: string;
  status: CheckStatus;
  /** What was looked at and found. */
  evidence: string;
  /** What to do, in one sentence; empty when the check passes. */
  fix: string;
  /** For a check of one sending domain: whose it is (GET /deliverability/checks shows a team its own). */
  domain?: { team_id: string; id: string };
}

export const pass = (name: string, evidence: string): CheckResult => ({ name, status: 'pass', evidence, fix: '' });
export const warn = (name: string, evidence: string, fix: string): CheckResult => ({ name, status: 'warn', evidence, fix });
export const fail = (name: string, evidence: string, fix: string): CheckResult => ({ name, status: 'fail', evidence, fix });

/** The worst verdict of a run: `fail` makes `posthorn doctor` exit 1. */
export function worst(checks: CheckResult[]): CheckStatus {
  return checks.some((c) => c.status === 'fail') ? 'fail' : checks.some((c) => c.status === 'warn') ? 'warn' : 'pass';
}
