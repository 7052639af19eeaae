// When a thread collects its garbage (limits/memory.ts): when the process grew and its own heap
// did; a collection that gave back little found live memory, and the next waits for twice the
// growth; one that gave back most resets it.
import { expect, test } from 'bun:test';
import { nextStep, shouldCollect } from '../../src/limits/memory';

const MB = 1024 * 1024;

test.each([
  // [step, grown, freed, next step]
  [64, 66, 60, 64],
  [64, 66, 6, 128],
  [128, 130, 30, 256],
  [128, 130, 40, 64],
  [256, 300, 200, 64],
  [1024, 1100, 10, 1024],
])('after a collection at a step of %d MB that found %d MB grown and freed %d: the next at %d MB', (step, grown, freed, next) => {
  expect(nextStep(step * MB, grown * MB, freed * MB)).toBe(next * MB);
});

test.each([
  // [step, process grown, this thread's heap grown, collect?]
  [64, 70, 40, true],
  [64, 70, 32, true],
  [64, 70, 20, false], // another thread's garbage: it collects, not this one
  [64, 40, 60, false], // the heap grew but the process did not: garbage JSC's own collections reuse
  [128, 130, 70, true],
])('at a step of %d MB, the process grown by %d MB and this thread’s heap by %d: collect %p', (step, grown, heapGrown, collect) => {
  expect(shouldCollect(step * MB, { base: 100 * MB, now: (100 + grown) * MB }, { base: 50 * MB, now: (50 + heapGrown) * MB })).toBe(collect);
});
