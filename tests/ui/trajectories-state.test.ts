import { describe, expect, it } from 'vitest';
import { TrajectoriesState } from '../../src/ui/screens/trajectories/trajectories.svelte.ts';
import { MemoryTrajectorySource } from '../../src/ui/sources/memory-trajectories.ts';
import { makeTrajectory } from '../store/fixtures.ts';

describe('TrajectoriesState', () => {
  it('fills the rows in view again after a refresh that leaves the count unchanged (the list does not ask twice)', async () => {
    const items = [makeTrajectory({ run_id: 'run-x' }), makeTrajectory({ run_id: 'run-x' })];
    const state = new TrajectoriesState(new MemoryTrajectorySource(() => items));
    await state.load();
    state.ensureRange(0, 2); // what the list asks for once
    await expect.poll(() => state.row(0)?.id).toBe(items[1].id);
    await state.refresh(); // a second visit: same count, pages dropped
    await expect.poll(() => state.row(0)?.id).toBe(items[1].id);
    expect(state.runName('run-x')).toBe('run-x');
  });
});
