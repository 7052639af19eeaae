// A line diff of two texts for the dashboard's side-by-side views (a template's version beside its
// latest one): the longest common subsequence of their lines, then rows that pair what was taken
// out with what was put in at the same place. Quadratic in lines, so texts too large to compare so
// (beyond MAX_CELLS line pairs) are shown whole, side by side, without marks.

export type Side = { n: number; text: string; changed: boolean } | null;

/** One row of a side-by-side view: the old line (left) and the new one (right); null where a side has none. */
export interface DiffRow {
  left: Side;
  right: Side;
}

/** Line pairs compared at most (about 16 MB of the table below). */
export const MAX_CELLS = 4_000_000;

export function lineDiff(before: string, after: string): { rows: DiffRow[]; compared: boolean; changes: number } {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length * b.length > MAX_CELLS) {
    const rows: DiffRow[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++)
      rows.push({
        left: i < a.length ? { n: i + 1, text: a[i], changed: false } : null,
        right: i < b.length ? { n: i + 1, text: b[i], changed: false } : null,
      });
    return { rows, compared: false, changes: before === after ? 0 : 1 };
  }
  // lcs[i][j]: the length of the longest common subsequence of a[i..] and b[j..] (one flat array).
  const w = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--) lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
  const rows: DiffRow[] = [];
  let changes = 0;
  let out: Side[] = [];
  let put: Side[] = [];
  /** The lines taken out and put in since the last common one, paired row by row. */
  const flush = () => {
    if (out.length || put.length) changes++;
    for (let k = 0; k < Math.max(out.length, put.length); k++) rows.push({ left: out[k] ?? null, right: put[k] ?? null });
    out = [];
    put = [];
  };
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      flush();
      rows.push({ left: { n: i + 1, text: a[i], changed: false }, right: { n: j + 1, text: b[j], changed: false } });
      i++;
      j++;
    } else if (j < b.length && (i === a.length || lcs[i * w + j + 1] >= lcs[(i + 1) * w + j])) {
      put.push({ n: j + 1, text: b[j], changed: true });
      j++;
    } else {
      out.push({ n: i + 1, text: a[i], changed: true });
      i++;
    }
  }
  flush();
  return { rows, compared: true, changes };
}
