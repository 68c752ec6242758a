/**
 * The Models & export screen's operations over the store and src/export: model cards shipped in
 * models/, checkpoints of every run, storage figures, dataset exports (chat JSONL, Parquet, Atropos
 * JSONL), PEFT adapter zips, imports, and run deletion. Importing a Hugging Face model and exporting
 * merged weights go to the engine, which holds the models (browser-engine.ts); `engine` reaches it.
 */
import * as Comlink from 'comlink';
import { readAdapter } from '../../export/peft.ts';
import { importTrajectories } from '../../export/index.ts';
import {
  countTrajectories,
  createRun,
  deleteRun,
  getRun,
  listCheckpoints,
  listEvaluations,
  listRuns,
  loadCheckpoint,
  saveCheckpoint,
  storageEstimate,
  type EvaluationRecord,
  type Store,
} from '../../store/index.ts';
import { DEFAULT_CONFIG } from '../../config/schema.ts';
import { writeSafetensors } from '../../hub/safetensors.ts';
import { adapterBaseModel, checkpointAdapter, checkpointAdapterZip } from '../operations/adapter-export.ts';
import { exportDataset } from '../operations/dataset-export.ts';
import type { MergeRequest } from '../engine/engine-api.ts';
import type { ModelImportSource } from '../engine/model-shelf.ts';
import type { DownloadProgress } from '../../hub/hub.ts';
import { IMPORTED_RUN } from './imported-run.ts';

export type ExportKind = 'adapter-zip' | 'merged-weights' | 'dataset-jsonl' | 'dataset-parquet' | 'dataset-atropos';

export interface ExportTarget {
  checkpointId?: string;
  runId?: string;
}

export interface ExportFile {
  filename: string;
  blob: Blob;
}

export type Progress = (done: number, total: number | null) => void;

/** The engine calls these operations need (the engine worker's remote on the page). */
export interface ModelEngine {
  importModel(source: ModelImportSource, onProgress?: (p: DownloadProgress) => void): Promise<{ name: string }>;
  importedModel(): Promise<{ name: string; card: string } | null>;
  mergedModelZip(request: MergeRequest): Promise<Uint8Array>;
}

// Shipped model cards, bundled as text at build time.
const CARDS = import.meta.glob('../../../models/*/README.md', {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;

const stamp = () => new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
const bytesOf = (parts: BlobPart[], type: string) => new Blob(parts, { type });

/** Each environment's latest test-split success at or before `step` (validation ones are `<env>/validation`). */
function heldOutAt(evaluations: EvaluationRecord[], step: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of evaluations)
    if (e.step <= step && !e.benchmark.includes('/')) out[`eval/${e.benchmark}/success`] = e.results.success;
  return out;
}

export function modelOperations(getStore: () => Promise<Store>, engine: () => ModelEngine) {
  return {
    /** The imported model's card first (what Playground and new runs use), then the shipped models'. */
    async modelCards() {
      const shipped = Object.entries(CARDS).map(([path, readme]) => ({ name: path.split('/').slice(-2)[0], readme }));
      const imported = await engine().importedModel();
      return imported ? [{ name: imported.name, readme: imported.card }, ...shipped] : shipped;
    },
    async checkpoints() {
      const store = await getStore();
      const runs = await listRuns(store);
      const lists = await Promise.all(
        runs.map(async (run) => {
          const [checkpoints, evaluations] = await Promise.all([
            listCheckpoints(store, run.id),
            listEvaluations(store, run.id),
          ]);
          return checkpoints.map((cp) => ({
            id: cp.id,
            run_id: run.id,
            run_name: run.name,
            step: cp.step,
            kind: run.id === IMPORTED_RUN ? ('adapter' as const) : ('checkpoint' as const),
            created_at: cp.created_at,
            bytes: cp.bytes,
            evals: heldOutAt(evaluations, cp.step),
          }));
        }),
      );
      return lists.flat().sort((a, b) => b.created_at - a.created_at);
    },
    async storage() {
      const store = await getStore();
      const [estimate, runs] = await Promise.all([storageEstimate(), listRuns(store)]);
      return {
        usage: estimate?.usage ?? null,
        quota: estimate?.quota ?? null,
        persisted: estimate?.persisted ?? null,
        runs: await Promise.all(
          runs.map(async (r) => ({
            id: r.id,
            name: r.name,
            status: r.status,
            created_at: r.created,
            trajectories: await countTrajectories(store, { run_id: r.id }),
            checkpoints: (await listCheckpoints(store, r.id)).length,
          })),
        ),
      };
    },
    async importModelFromUrl(url: string, onProgress: Progress, signal: AbortSignal) {
      onProgress(0, null);
      // A hub id downloads through the engine's cache, file by file; the bar follows the weights, the largest file.
      const source = /^https?:\/\//.test(url) ? { url } : { hub: url };
      const { name } = await engine().importModel(
        source,
        Comlink.proxy(({ file, loaded, total }: DownloadProgress) => {
          if (file.endsWith('.safetensors')) onProgress(loaded, total);
        }),
      );
      signal.throwIfAborted();
      return name;
    },
    async importModelFromFiles(files: File[], onProgress: Progress, signal: AbortSignal) {
      const total = files.reduce((n, f) => n + f.size, 0);
      onProgress(0, total);
      // Files are Blobs: they cross to the worker by reference, and it reads only what the import needs.
      const { name } = await engine().importModel({ files: Object.fromEntries(files.map((f) => [f.name, f as Blob])) });
      signal.throwIfAborted();
      onProgress(total, total);
      return name;
    },
    async exportItem(
      kind: ExportKind,
      target: ExportTarget,
      onProgress: Progress,
      signal: AbortSignal,
    ): Promise<ExportFile> {
      const store = await getStore();
      const name = target.runId ?? 'all-runs';
      // Datasets: the one export `spindle export trajectories` writes too (dataset-export.ts), for one run or all.
      const progress = { onProgress: (rows: number) => onProgress(rows, null), signal };
      switch (kind) {
        case 'dataset-jsonl': {
          const { data, count } = await exportDataset(store, 'jsonl', { runId: target.runId }, progress);
          if (!count) throw new Error('No trajectories to export: run episodes or a training run first.');
          return {
            filename: `spindle-${name}-${stamp()}.jsonl`,
            blob: bytesOf([data as BlobPart], 'application/jsonl'),
          };
        }
        case 'dataset-parquet': {
          const { data } = await exportDataset(store, 'parquet', { runId: target.runId }, progress);
          return {
            filename: `spindle-${name}-${stamp()}.parquet`,
            blob: bytesOf([data as BlobPart], 'application/vnd.apache.parquet'),
          };
        }
        case 'dataset-atropos': {
          if (!target.runId) throw new Error('Atropos groups belong to one run: choose a run in "From".');
          const { data, count } = await exportDataset(store, 'atropos', { runId: target.runId });
          if (!count)
            throw new Error('This run has no scored groups yet (they are written as the trainer consumes them).');
          return {
            filename: `spindle-${name}-atropos-${stamp()}.jsonl`,
            blob: bytesOf([data as BlobPart], 'application/jsonl'),
          };
        }
        case 'adapter-zip': {
          const cp = target.checkpointId ? await loadCheckpoint(store, target.checkpointId) : undefined;
          if (!cp) throw new Error('That checkpoint is no longer stored; refresh the list.');
          const { zip, run } = await checkpointAdapterZip(store, cp);
          onProgress(zip.length, zip.length);
          return {
            filename: `${run?.name ?? cp.run_id}-step${cp.step}-adapter.zip`,
            blob: bytesOf([zip as BlobPart], 'application/zip'),
          };
        }
        case 'merged-weights': {
          const cp = target.checkpointId ? await loadCheckpoint(store, target.checkpointId) : undefined;
          if (!cp) throw new Error('That checkpoint is no longer stored; refresh the list.');
          const adapterOf = await checkpointAdapter(store, cp);
          const { config: peft, run } = adapterOf;
          const baseModel = adapterBaseModel(adapterOf);
          onProgress(0, null);
          const adapter = new Uint8Array(cp.adapter.slice(0));
          const zip = await engine().mergedModelZip(Comlink.transfer({ baseModel, adapter, peft }, [adapter.buffer]));
          signal.throwIfAborted();
          onProgress(zip.length, zip.length);
          const label = (run?.name ?? cp.run_id).replace(/[^\w.-]+/g, '-');
          return {
            filename: `${label}-step${cp.step}-merged.zip`,
            blob: bytesOf([zip as BlobPart], 'application/zip'),
          };
        }
      }
    },
    async importAdapter(file: File, onProgress: Progress) {
      const bytes = new Uint8Array(await file.arrayBuffer());
      onProgress(bytes.length, bytes.length);
      const { config, tensors } = readAdapter(bytes, file.name);
      const weights = writeSafetensors(tensors, { format: 'pt' });
      const store = await getStore();
      if (!(await getRun(store, IMPORTED_RUN)))
        await createRun(store, { ...DEFAULT_CONFIG, name: 'imported adapters' }, { id: IMPORTED_RUN });
      return saveCheckpoint(store, {
        run_id: IMPORTED_RUN,
        step: 0,
        adapter: weights.slice().buffer,
        optimizer: null,
        meta: { file: file.name, peft: config as unknown as Record<string, unknown> },
      });
    },
    async importDataset(file: File, onProgress: Progress) {
      const data = new Uint8Array(await file.arrayBuffer());
      onProgress(data.length, data.length);
      const result = await importTrajectories(await getStore(), { name: file.name, data });
      return { trajectories: result.added };
    },
    async deleteRun(runId: string) {
      await deleteRun(await getStore(), runId);
    },
  };
}
