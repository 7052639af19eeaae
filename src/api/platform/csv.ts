// CSV as the exports write it (docs/api.md §4.1): RFC 4180 records, made safe to open in a
// spreadsheet. Writing CSV is a few lines, so Posthorn owns them (reading it is csv-parse's job,
// src/imports/); the tests read every export back with csv-parse.

/** A cell before it is written: null (and undefined) is an empty field, any other value its text. */
export type Cell = string | number | boolean | null | undefined;

/**
 * Cells a spreadsheet would read as a formula (docs/api.md §4.1): one starting with `=`, `+`,
 * `-`, `@`, a tab or a carriage return. Such a cell gets a leading `'`, which spreadsheets take as
 * "this is text" and do not show.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One field: quoted (RFC 4180 §2 rule 5), its quotes doubled (rule 7), text that looks like a formula neutralised; null is an empty field. */
export function csvField(cell: Cell): string {
  if (cell === null || cell === undefined) return '';
  let text = String(cell);
  if (FORMULA_START.test(text)) text = `'${text}`;
  // Every field quoted, not only those with a comma, quote or line break (rules 5–6): a spreadsheet
  // set to read `;` as the separator keeps a quoted field whole, and an empty string ("") stays
  // apart from a missing value (nothing).
  return `"${text.replaceAll('"', '""')}"`;
}

/** One record and its line break, CRLF (RFC 4180 §2 rules 1 and 4). */
export function csvRecord(cells: readonly Cell[]): string {
  return `${cells.map(csvField).join(',')}\r\n`;
}
