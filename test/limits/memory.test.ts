// When the process collects its garbage (limits/memory.ts): a collection that gave back little
// found live memory, and the next waits for twice the growth; one that gave back most resets it.
import { expect, test } from 'bun:test';
import { nextStep } from '../../src/limits/memory';

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
