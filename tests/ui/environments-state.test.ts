/** EnvironmentsState over the demo source and a failing one: what the Environments screen does with each answer. */
import { describe, expect, it } from 'vitest';
import { EnvironmentsState, nextProgress } from '../../src/ui/screens/environments/environments.svelte.ts';
import type { EnvironmentsSource } from '../../src/ui/screens/environments/source.ts';
import { demoEnvironments } from '../../src/ui/sources/demo-environments.ts';

const BUILTINS = [{ id: 'arith_tool', description: 'arithmetic', levels: [1, 2] }];

describe("the check's progress lines", () => {
  it('shows a starting step while it runs, then what it found in its place', () => {
    let lines = nextProgress([], 'sampling 5 tasks…');
    expect(lines).toEqual(['sampling 5 tasks…']);
    lines = nextProgress(lines, '5 tasks sampled');
    lines = nextProgress(lines, 'level 1: the expert on 8 tasks…');
    expect(lines).toEqual(['5 tasks sampled', 'level 1: the expert on 8 tasks…']);
    expect(nextProgress(lines, 'level 1: expert 8/8')).toEqual(['5 tasks sampled', 'level 1: expert 8/8']);
  });
});

describe('EnvironmentsState', () => {
  it('starts from the starter, checks the example with progress, saves it and lists it as checked', async () => {
    const state = new EnvironmentsState(demoEnvironments(BUILTINS));
    await state.load();
    expect(state.text).toContain('my_environment');
    expect(state.builtins.map((b) => b.name)).toEqual(['arith_tool']);
    state.loadExample();
    expect(state.text).toContain("name: 'treasure_hunt'");
    const checking = state.check();
    expect(state.phase).toBe('checking');
    await checking;
    expect(state.phase).toBe('passed');
    expect(state.audit?.samples).toHaveLength(5);
    expect(state.progress).toEqual(['5 tasks sampled', 'level 1: expert 8/8', 'level 2: expert 8/8']);
    await state.save();
    expect(state.selected).toBe('treasure_hunt');
    expect(state.user.map((u) => [u.name, u.status])).toEqual([['treasure_hunt', 'passed']]);
    expect(state.note).toMatch(/Playground/);
    // An edit makes the check shown stale, and a save of the edited text is unchecked.
    state.setText(`${state.text}\n// more`);
    expect(state.stale).toBe(true);
    await state.save();
    expect(state.user[0].status).toBe('unchecked');
    expect(state.exportFile().fileName).toBe('treasure_hunt.js');
  });

  it('marks the failing line, cancels a running check, and keeps the draft when a save is refused', async () => {
    const demo = demoEnvironments(BUILTINS);
    const failure = {
      ok: false as const,
      problems: ['loading the module: SyntaxError: unexpected token (env.js:7)', 'another'],
      line: 7,
    };
    const source: EnvironmentsSource = { ...demo, check: async () => failure, save: async () => failure };
    const state = new EnvironmentsState(source);
    await state.load();
    await state.check();
    expect(state.phase).toBe('failed');
    expect(state.editorErrors).toEqual([{ line: 7, message: failure.problems[0] }, { message: 'another' }]);
    const text = state.text;
    await state.save();
    expect(state.actionError).toMatch(/not saved/);
    expect(state.text).toBe(text);
    expect(state.user).toEqual([]);

    const slow = new EnvironmentsState(demo);
    await slow.load();
    const running = slow.check();
    slow.cancel();
    await running;
    expect(slow.phase).toBe('cancelled');
    expect(slow.audit).toBeNull();
  });
});
