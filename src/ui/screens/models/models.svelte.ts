/**
 * Models & export state: the shipped model card, checkpoints with evals, storage and runs, and
 * import/export jobs. A finished export is handed to the browser as a download.
 */
import { errorMessage } from '../../lib/format.ts';
import { Job } from './jobs.svelte.ts';
import type { CheckpointInfo, ExportKind, ExportTarget, ModelCardText, ModelsSource, StorageUse } from './source.ts';

export const EXPORT_LABELS: Record<ExportKind, string> = {
  'adapter-zip': 'LoRA adapter (PEFT zip)',
  'merged-weights': 'Merged weights (safetensors)',
  'dataset-jsonl': 'Dataset — chat JSONL',
  'dataset-parquet': 'Dataset — Parquet',
  'dataset-atropos': 'Dataset — Atropos JSONL',
};

export class ModelsState {
  cards = $state<ModelCardText[]>([]);
  checkpoints = $state<CheckpointInfo[]>([]);
  storage = $state<StorageUse | null>(null);
  jobs = $state<Job[]>([]);
  loadError = $state<string | null>(null);
  deleteError = $state<string | null>(null);
  /** The run whose deletion awaits confirmation. */
  confirmDelete = $state<string | null>(null);

  constructor(
    private readonly source: ModelsSource,
    /** Hands a file to the user; the app uses an <a download>, tests capture it. */
    private readonly download: (file: { filename: string; blob: Blob }) => void = downloadBlob,
  ) {}

  async load(): Promise<void> {
    try {
      const [cards, checkpoints, storage] = await Promise.all([this.source.modelCards(), this.source.checkpoints(), this.source.storage()]);
      this.cards = cards;
      this.checkpoints = checkpoints;
      this.storage = storage;
      this.loadError = null;
    } catch (err) {
      this.loadError = errorMessage(err);
    }
  }

  jobsAt(place: string): Job[] {
    return this.jobs.filter((j) => j.place === place);
  }

  private startJob(label: string, place: string): Job {
    const job = new Job(label, place);
    // Finished jobs of the same place make way for the new one.
    this.jobs = [...this.jobs.filter((j) => j.place !== place || j.status === 'running'), job];
    return job;
  }

  async export(kind: ExportKind, target: ExportTarget, place: string): Promise<void> {
    const job = this.startJob(EXPORT_LABELS[kind], place);
    const file = await job.run((j) => this.source.exportItem(kind, target, j.progress, j.abort.signal), (f) => `${f.filename} (${f.blob.size.toLocaleString()} bytes)`);
    if (file) this.download(file);
  }

  async importModelUrl(url: string): Promise<void> {
    const job = this.startJob(`Import ${url}`, 'import-model');
    const text = url.trim();
    // A hub address without its scheme would read as the id "huggingface.co/<org>": say what to type instead.
    const hostWithoutScheme = /^(www\.)?huggingface\.co\//.test(text);
    if (hostWithoutScheme || (!/^https?:\/\//.test(text) && !/^(hf:)?[\w.-]+\/[\w.-]+(@[\w./-]+)?$/.test(text))) {
      job.status = 'error';
      job.error = 'Enter a Hugging Face model id like HuggingFaceTB/SmolLM2-135M-Instruct (add @revision to pin one), or a folder URL like https://huggingface.co/<org>/<model>/resolve/main/';
      return;
    }
    const name = await job.run((j) => this.source.importModelFromUrl(text, j.progress, j.abort.signal), (name) => `imported as ${name}`);
    if (name) await this.load(); // its card
  }

  async importModelFiles(files: File[]): Promise<void> {
    const job = this.startJob(`Import ${files.length} file${files.length === 1 ? '' : 's'}`, 'import-model');
    const name = await job.run((j) => this.source.importModelFromFiles(files, j.progress, j.abort.signal), (name) => `imported as ${name}`);
    if (name) await this.load(); // its card
  }

  async importAdapter(file: File): Promise<void> {
    const job = this.startJob(`Import ${file.name}`, 'import-adapter');
    const id = await job.run((j) => this.source.importAdapter(file, j.progress, j.abort.signal), (id) => `added as ${id}`);
    if (id) await this.load();
  }

  async importDataset(file: File): Promise<void> {
    const job = this.startJob(`Import ${file.name}`, 'import-dataset');
    const result = await job.run((j) => this.source.importDataset(file, j.progress, j.abort.signal), (r) => `${r.trajectories} trajectories added`);
    if (result) this.storage = await this.source.storage();
  }

  async deleteRun(runId: string): Promise<void> {
    this.confirmDelete = null;
    try {
      await this.source.deleteRun(runId);
      this.deleteError = null;
      await this.load();
    } catch (err) {
      this.deleteError = errorMessage(err);
    }
  }
}

function downloadBlob(file: { filename: string; blob: Blob }): void {
  const url = URL.createObjectURL(file.blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = file.filename;
  document.body.append(a);
  a.click();
  a.remove();
  // Revoke later: Chrome reads the blob asynchronously after click().
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
