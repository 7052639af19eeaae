// The dashboard's line diff (web/src/line-diff.ts), which the template version history shows side by
// side: common lines paired, what was taken out and put in at one place paired row by row, texts
// too large to compare shown whole.
import { describe, expect, test } from 'bun:test';
import { lineDiff, MAX_CELLS } from '../../web/src/line-diff';

/** Rows as `[left, right]`, a changed line marked `-` (left) or `+` (right), a missing side null. */
const shown = (before: string, after: string) =>
  lineDiff(before, after).rows.map((r) => [
    r.left && `${r.left.changed ? '-' : ''}${r.left.n}:${r.left.text}`,
    r.right && `${r.right.changed ? '+' : ''}${r.right.n}:${r.right.text}`,
  ]);

describe('lineDiff', () => {
  test('the same text: every line paired, nothing changed', () => {
    expect(shown('a\nb', 'a\nb')).toEqual([
      ['1:a', '1:a'],
      ['2:b', '2:b'],
    ]);
    expect(lineDiff('a\nb', 'a\nb').changes).toBe(0);
  });

  test('a changed line, a line added at the end, a line taken out', () => {
    expect(shown('a\nb\nc', 'a\nB\nc\nd')).toEqual([
      ['1:a', '1:a'],
      ['-2:b', '+2:B'],
      ['3:c', '3:c'],
      [null, '+4:d'],
    ]);
    expect(lineDiff('a\nb\nc', 'a\nB\nc\nd').changes).toBe(2);
    expect(shown('x\ny\nz', 'x\nz')).toEqual([
      ['1:x', '1:x'],
      ['-2:y', null],
      ['3:z', '2:z'],
    ]);
  });

  test('several lines replaced at one place pair up row by row', () => {
    expect(shown('<p>\none\ntwo\n</p>', '<p>\nuno\n</p>')).toEqual([
      ['1:<p>', '1:<p>'],
      ['-2:one', '+2:uno'],
      ['-3:two', null],
      ['4:</p>', '3:</p>'],
    ]);
  });

  test('texts too large to compare line by line are shown whole, unmarked', () => {
    const big = Array.from({ length: Math.ceil(Math.sqrt(MAX_CELLS)) + 1 }, (_, i) => `line ${i}`).join('\n');
    const d = lineDiff(big, `${big}\nmore`);
    expect(d.compared).toBe(false);
    expect(d.rows.every((r) => !r.left?.changed && !r.right?.changed)).toBe(true);
    expect(d.rows.at(-1)).toEqual({ left: null, right: expect.objectContaining({ text: 'more' }) });
  });
});
