/** What the Models & export screen needs: model cards, checkpoints, imports, exports, storage. */
import type { ExportFile, ExportKind, ExportTarget, Progress } from '../../../pipeline/app/models.ts';

export type { ExportFile, ExportKind, ExportTarget, Progress };

export interface ModelCardText {
  name: string;
  /** The README.md text of models/<name>/. */
  readme: string;
}

export interface CheckpointInfo {
  id: string;
  run_id: string;
  run_name: string;
  step: number;
  kind: 'checkpoint' | 'adapter';
  created_at: number;
  bytes: number | null;
  /** Eval results by name (`eval/arith_tool/success` → 0.62). */
  evals: Record<string, number>;
}

export interface StoredRun {
  id: string;
  name: string;
  status: string;
  created_at: number;
  trajectories: number;
  checkpoints: number;
}

export interface StorageUse {
  /** From navigator.storage.estimate(); null where the browser does not say. */
  usage: number | null;
  quota: number | null;
  persisted: boolean | null;
  runs: StoredRun[];
}


export interface ModelsSource {
  modelCards(): Promise<ModelCardText[]>;
  checkpoints(): Promise<CheckpointInfo[]>;
  storage(): Promise<StorageUse>;
  /** A Hugging Face layout (config.json, model.safetensors, tokenizer.json) from a URL or picked files; returns the model name. */
  importModelFromUrl(url: string, onProgress: Progress, signal: AbortSignal): Promise<string>;
  importModelFromFiles(files: File[], onProgress: Progress, signal: AbortSignal): Promise<string>;
  exportItem(kind: ExportKind, target: ExportTarget, onProgress: Progress, signal: AbortSignal): Promise<ExportFile>;
  /** A PEFT adapter zip (adapter_config.json + adapter_model.safetensors); returns the new checkpoint id. */
  importAdapter(file: File, onProgress: Progress, signal: AbortSignal): Promise<string>;
  /** HF chat JSONL, Parquet or Atropos JSONL; returns how many trajectories were added. */
  importDataset(file: File, onProgress: Progress, signal: AbortSignal): Promise<{ trajectories: number }>;
  deleteRun(runId: string): Promise<void>;
}
