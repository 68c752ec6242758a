/** createScreens over the demo sources: each screen loads on its first visit; later visits refresh only what others change. */
import { describe, expect, it } from 'vitest';
import { createScreens } from '../../src/ui/screens.svelte.ts';
import { createDemoSources } from '../../src/ui/sources/demo.ts';

describe('createScreens', () => {
  it('loads a screen once, then refreshes trajectories, the Train judges and the Models lists on each later visit', async () => {
    const sources = createDemoSources();
    const calls: string[] = [];
    const count = <T extends object>(name: string, target: T, method: keyof T) => {
      const original = target[method] as unknown as (...args: unknown[]) => unknown;
      (target as Record<keyof T, unknown>)[method] = (...args: unknown[]) => {
        calls.push(name);
        return original.apply(target, args);
      };
    };
    count('judges.load', sources.judges, 'load');
    count('models.storage', sources.models, 'storage');
    count('trajectories.count', sources.trajectories, 'count');
    const screens = createScreens(sources);
    await screens.activate('judges');
    await screens.activate('judges');
    expect(calls.filter((c) => c === 'judges.load')).toHaveLength(1);
    await screens.activate('models');
    await screens.activate('models');
    expect(calls.filter((c) => c === 'models.storage')).toHaveLength(2);
    await screens.activate('trajectories');
    const before = calls.filter((c) => c === 'trajectories.count').length;
    expect(before).toBeGreaterThan(0);
    await screens.activate('trajectories');
    expect(calls.filter((c) => c === 'trajectories.count').length).toBeGreaterThan(before);
    expect(screens.judges.remotes.length + screens.judges.calibratable.length).toBeGreaterThan(0);
    screens.train.dispose();
  });
});
