/** ModelsState and Job over a fake ModelsSource: loading, exports handed to the download, imports, run deletion. */
import { describe, expect, it } from 'vitest';
import { Job } from '../../src/ui/screens/models/jobs.svelte.ts';
import { ModelsState } from '../../src/ui/screens/models/models.svelte.ts';
import type { ModelsSource, StorageUse } from '../../src/ui/screens/models/source.ts';

function fakeSource() {
  const runs = ['run-a', 'run-b'];
  const calls: string[] = [];
  const storage = async (): Promise<StorageUse> => ({
    usage: 10,
    quota: 100,
    persisted: false,
    runs: runs.map((id) => ({ id, name: id, status: 'completed', created_at: 0, trajectories: 2, checkpoints: 1 })),
  });
  const source: ModelsSource = {
    modelCards: async () => [{ name: 'spindle-base', readme: '# spindle-base' }],
    checkpoints: async () =>
      runs.map((id) => ({
        id: `${id}-cp`,
        run_id: id,
        run_name: id,
        step: 1,
        kind: 'checkpoint' as const,
        created_at: 0,
        bytes: 4,
        evals: {},
      })),
    storage,
    importModelFromUrl: async (url) => {
      calls.push(`url ${url}`);
      return 'tiny';
    },
    importModelFromFiles: async (files) => {
      calls.push(`files ${files.length}`);
      return 'tiny';
    },
    async exportItem(kind, target, onProgress, signal) {
      onProgress(1, 2);
      if (kind === 'dataset-atropos' && !target.runId) throw new Error('choose a run');
      if (kind === 'merged-weights')
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
      return { filename: `${kind}.bin`, blob: new Blob(['abc']) };
    },
    importAdapter: async (file) => {
      calls.push(`adapter ${file.name}`);
      return 'imported-cp';
    },
    importDataset: async () => ({ trajectories: 3 }),
    async deleteRun(id) {
      if (id === 'locked') throw new Error('the run is live in another tab');
      runs.splice(runs.indexOf(id), 1);
    },
  };
  return { source, calls };
}

describe('ModelsState', () => {
  it('loads cards, checkpoints and storage; an export hands its file to the download and says what it was', async () => {
    const { source } = fakeSource();
    const downloads: string[] = [];
    const state = new ModelsState(source, (f) => downloads.push(f.filename));
    await state.load();
    expect(state.cards.map((c) => c.name)).toEqual(['spindle-base']);
    expect(state.checkpoints).toHaveLength(2);
    expect(state.storage?.runs).toHaveLength(2);
    await state.export('adapter-zip', { checkpointId: 'run-a-cp' }, 'cp-run-a');
    expect(downloads).toEqual(['adapter-zip.bin']);
    expect(state.jobsAt('cp-run-a')[0]).toMatchObject({
      status: 'done',
      result: 'adapter-zip.bin (3 bytes)',
      done: 1,
      total: 2,
    });
  });

  it("keeps a failed export's error beside its button, and a new job there replaces the finished one", async () => {
    const { source } = fakeSource();
    const downloads: string[] = [];
    const state = new ModelsState(source, (f) => downloads.push(f.filename));
    await state.export('dataset-atropos', {}, 'datasets');
    expect(state.jobsAt('datasets').map((j) => [j.status, j.error])).toEqual([['error', 'choose a run']]);
    await state.export('dataset-jsonl', {}, 'datasets');
    expect(state.jobsAt('datasets').map((j) => j.status)).toEqual(['done']);
    expect(downloads).toEqual(['dataset-jsonl.bin']);
  });

  it('a cancelled export ends cancelled, without an error or a download', async () => {
    const { source } = fakeSource();
    const downloads: string[] = [];
    const state = new ModelsState(source, (f) => downloads.push(f.filename));
    const exporting = state.export('merged-weights', { checkpointId: 'run-a-cp' }, 'cp');
    state.jobsAt('cp')[0].abort.abort();
    await exporting;
    expect(state.jobsAt('cp')[0]).toMatchObject({ status: 'cancelled', error: null });
    expect(downloads).toEqual([]);
  });

  it('refuses what is neither a hub id nor an http(s) URL without asking the source; imports reload what they change', async () => {
    const { source, calls } = fakeSource();
    const state = new ModelsState(source, () => {});
    for (const bad of ['huggingface.co/x/y', 'just-a-name', 'ftp://host/model']) {
      await state.importModelUrl(bad);
      expect(state.jobsAt('import-model')[0]).toMatchObject({ status: 'error' });
      expect(state.jobsAt('import-model')[0].error).toMatch(/model id like .*or a folder URL like https:\/\//);
    }
    await state.importModelUrl(' HuggingFaceTB/SmolLM2-135M-Instruct@main ');
    expect(state.jobsAt('import-model')[0]).toMatchObject({ status: 'done' });
    await state.importModelUrl(' https://huggingface.co/x/resolve/main/ ');
    expect(state.jobsAt('import-model')[0]).toMatchObject({ status: 'done', result: 'imported as tiny' });
    await state.importAdapter(new File(['x'], 'adapter.zip'));
    expect(state.jobsAt('import-adapter')[0].result).toBe('added as imported-cp');
    expect(state.checkpoints).toHaveLength(2);
    await state.importDataset(new File(['x'], 'data.jsonl'));
    expect(state.jobsAt('import-dataset')[0].result).toBe('3 trajectories added');
    expect(calls).toEqual([
      'url HuggingFaceTB/SmolLM2-135M-Instruct@main',
      'url https://huggingface.co/x/resolve/main/',
      'adapter adapter.zip',
    ]);
  });

  it('deletes a run and reloads; a refused deletion shows why', async () => {
    const { source } = fakeSource();
    const state = new ModelsState(source, () => {});
    await state.load();
    state.confirmDelete = 'run-a';
    await state.deleteRun('run-a');
    expect(state.confirmDelete).toBeNull();
    expect(state.storage?.runs.map((r) => r.id)).toEqual(['run-b']);
    await state.deleteRun('locked');
    expect(state.deleteError).toBe('the run is live in another tab');
  });
});

describe('Job', () => {
  it('records progress, and a result or an error', async () => {
    const job = new Job('x', 'here');
    expect(
      await job.run(
        async (j) => {
          j.progress(3, null);
          return 7;
        },
        (n) => `got ${n}`,
      ),
    ).toBe(7);
    expect(job).toMatchObject({ status: 'done', result: 'got 7', done: 3, total: null });
    const failing = new Job('y', 'here');
    expect(
      await failing.run(
        async () => {
          throw new Error('no');
        },
        () => '',
      ),
    ).toBeNull();
    expect(failing).toMatchObject({ status: 'error', error: 'no' });
    expect(failing.id).toBeGreaterThan(job.id);
  });
});
