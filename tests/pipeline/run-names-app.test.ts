/**
 * Run names are unique per store, decided as the run is written (src/store/run-names.ts), so the app's
 * pickers and the CLI see the same "judged-run 2" for a second run named "judged-run".
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { createRun, listRuns, openStore } from '../../src/store/index.ts';
import { uniqueRunName } from '../../src/store/run-names.ts';
import { IMPORTED_RUN } from '../../src/pipeline/app/imported-run.ts';
import { PLAYGROUND_RUN } from '../../src/pipeline/app/playground.ts';
import { trainOperations } from '../../src/pipeline/app/train.ts';

describe('uniqueRunName', () => {
  it('keeps a free name and numbers a taken one from 2', () => {
    expect(uniqueRunName('judged-run', [])).toBe('judged-run');
    expect(uniqueRunName('judged-run', ['judged-run'])).toBe('judged-run 2');
    expect(uniqueRunName('judged-run', ['judged-run', 'judged-run 2'])).toBe('judged-run 3');
  });

  it('a taken numbered name continues its count, and a blank name becomes "run"', () => {
    expect(uniqueRunName('judged-run 2', ['judged-run', 'judged-run 2'])).toBe('judged-run 3');
    expect(uniqueRunName('  ', [])).toBe('run');
  });
});

describe('createRun', () => {
  it('gives each new run a name no other run in the store has, its config left as given', async () => {
    const store = await openStore({ factory: new IDBFactory() });
    const config = { ...DEFAULT_CONFIG, name: 'judged-run' };
    const first = await createRun(store, config);
    const second = await createRun(store, config);
    expect([first.name, second.name]).toEqual(['judged-run', 'judged-run 2']);
    expect(second.config.name).toBe('judged-run');
    // Runs started at once still get distinct names: each is named in the transaction that writes it.
    await Promise.all([createRun(store, config), createRun(store, config)]);
    const names = (await listRuns(store)).map((r) => r.name);
    expect(new Set(names).size).toBe(4);
    expect(names.sort()).toEqual(['judged-run', 'judged-run 2', 'judged-run 3', 'judged-run 4']);
  });
});

describe("the Train screen's runs to compare with", () => {
  it('are the training runs by their unique names, newest first, without the Playground and imported adapters', async () => {
    const store = await openStore({ factory: new IDBFactory() });
    await createRun(store, { ...DEFAULT_CONFIG, name: 'playground' }, { id: PLAYGROUND_RUN, now: 1 });
    await createRun(store, { ...DEFAULT_CONFIG, name: 'imported adapters' }, { id: IMPORTED_RUN, now: 2 });
    const a = await createRun(store, { ...DEFAULT_CONFIG, name: 'judged-run' }, { now: 3 });
    const b = await createRun(store, { ...DEFAULT_CONFIG, name: 'judged-run' }, { now: 4 });
    expect(await trainOperations(async () => store).runs()).toEqual([
      { id: b.id, name: 'judged-run 2' },
      { id: a.id, name: 'judged-run' },
    ]);
  });
});
