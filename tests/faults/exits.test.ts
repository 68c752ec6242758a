/**
 * Faults: commands that did no work say so with a non-zero exit, and a run whose process died is
 * shown as interrupted instead of running forever.
 */
import 'fake-indexeddb/auto';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { createRun, getRun, listRuns, openStore, setRunStatus } from '../../src/store/index.ts';
import { cli, tempDir } from '../cli/helpers.ts';

describe('CLI commands that did no work exit non-zero', () => {
  it('eval at a level the environment lacks', async () => {
    const r = await cli(tempDir(), 'eval', '--env', 'arith_tool', '--level', '9');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/arith_tool has no level 9; its levels are 1, 2, 3, 4, 5\. Nothing was evaluated\./);
  });
});

describe('a run whose process died', () => {
  it('shows as interrupted, naming the process; a run of a live process stays running', async () => {
    const store = await openStore({ factory: new IDBFactory() });
    const dead = spawnSync(process.execPath, ['-e', '']).pid!; // exited by the time spawnSync returns
    await createRun(store, DEFAULT_CONFIG, { id: 'killed' });
    await createRun(store, DEFAULT_CONFIG, { id: 'alive' });
    await setRunStatus(store, 'alive', 'running');
    const running = await setRunStatus(store, 'killed', 'running');
    expect(running.owner).toEqual({ pid: process.pid });
    await store.db.put('runs', { ...running, owner: { pid: dead } }); // as if another process, since killed, had started it

    const killed = await getRun(store, 'killed');
    expect(killed).toMatchObject({
      status: 'interrupted',
      error: expect.stringMatching(new RegExp(`pid ${dead}\\) exited without finishing`)),
    });
    expect(Object.fromEntries((await listRuns(store)).map((r) => [r.id, r.status]))).toEqual({
      killed: 'interrupted',
      alive: 'running',
    });
  });
});
