import { describe, expect, it } from 'vitest';
import { checkingText } from '../../src/ui/screens/environments/busy-text.ts';

describe('checkingText', () => {
  it('names the step under way and its number', () => {
    expect(checkingText([])).toBe('Checking: 0 steps done…');
    expect(checkingText(['loading the environment…'])).toBe('Checking: step 1 — loading the environment…');
    expect(checkingText(['loaded x', '5 tasks sampled', 'level 1: running the expert…'])).toBe(
      'Checking: step 3 — level 1: running the expert…',
    );
  });

  it('between steps, counts the ones done', () => {
    expect(checkingText(['loaded x'])).toBe('Checking: 1 step done…');
    expect(checkingText(['loaded x', '5 tasks sampled'])).toBe('Checking: 2 steps done…');
  });
});
