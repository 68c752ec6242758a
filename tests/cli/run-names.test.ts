/** The CLI prints each run's name beside its id: two runs from one config are told apart by their names. */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openFileStore } from '../../src/store/file-store.ts';
import { listRuns } from '../../src/store/index.ts';
import { runLabel } from '../../src/store/run-names.ts';
import { cli, tempDir, tinyConfig, writeConfig } from './helpers.ts';

describe('runLabel', () => {
  it('puts the name beside the id, and leaves an id bare when the run has no name of its own', () => {
    expect(runLabel({ id: 'run-1', name: 'judged-run 2' })).toBe('run-1 (judged-run 2)');
    expect(runLabel({ id: 'run-1', name: ' ' })).toBe('run-1');
    expect(runLabel({ id: 'playground', name: 'playground' })).toBe('playground');
  });
});

describe('run names in the CLI', () => {
  let dir: string;
  /** The store's runs, oldest first: what the printed lines must name. */
  let runs: { id: string; name: string }[];
  let collected: string[];

  beforeAll(async () => {
    dir = tempDir();
    writeConfig(
      dir,
      tinyConfig((c) => (c.name = 'named')),
    );
    collected = [];
    // The scripted expert needs no model: two runs of the same config, so the second name gets a number.
    for (let i = 0; i < 2; i++) {
      const r = await cli(dir, 'collect', '--config', 'run.yaml', '--groups', '1', '--policy', 'expert');
      expect(r.code, r.err).toBe(0);
      collected.push(r.out);
    }
    const store = await openFileStore(join(dir, '.spindle'));
    runs = (await listRuns(store)).sort((a, b) => a.created - b.created);
    await store.close();
  }, 60_000);

  it('collect names the run it stored', () => {
    expect(runs.map((r) => r.name)).toEqual(['named-collect', 'named-collect 2']);
    expect(collected[0]).toContain(`run ${runs[0].id} (named-collect): 1 trajectories`);
    expect(collected[1]).toContain(`run ${runs[1].id} (named-collect 2): 1 trajectories`);
  });

  it('export trajectories names the run it exported, and an unknown run lists the recent ones by name', async () => {
    const exported = await cli(
      dir,
      'export',
      'trajectories',
      '--format',
      'jsonl',
      '--output',
      'out',
      '--run',
      runs[1].id,
    );
    expect(exported.code, exported.err).toBe(0);
    expect(exported.out).toMatch(new RegExp(`^wrote 1 trajectories of run ${runs[1].id} \\(named-collect 2\\) to `));

    const unknown = await cli(dir, 'export', 'trajectories', '--format', 'jsonl', '--output', 'out', '--run', 'nope');
    expect(unknown.code).not.toBe(0);
    expect(unknown.err).toContain(`${runs[1].id} (named-collect 2)`);
    expect(unknown.err).toContain(`${runs[0].id} (named-collect)`);
  });
});
