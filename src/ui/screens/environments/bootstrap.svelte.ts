/**
 * The Environments screen's bootstrap: offered when the check's policy solved none of its items. It
 * saves nothing itself: it runs the flow on the saved environment in the engine (demonstrations, SFT,
 * GRPO) and keeps its step lines and the three held-out figures as they arrive.
 */
import { errorMessage } from '../../lib/format.ts';
import type { BootstrapChoice, BootstrapEvent, BootstrapReport, EnvironmentsSource, HeldOut } from './source.ts';

export type BootstrapPhase = 'idle' | 'running' | 'done' | 'failed' | 'cancelled';
export type SourceKind = 'expert' | 'episodes' | 'remote';

export class BootstrapState {
  phase = $state<BootstrapPhase>('idle');
  kind = $state<SourceKind>('expert');
  /** The remote source's endpoint root (with its /v1) and model name. */
  endpoint = $state('');
  remoteModel = $state('');
  /** The episodes source: one run's only (empty: every stored train-split episode). */
  episodesRun = $state('');
  /** The flow's sizes, editable on the panel. */
  demonstrations = $state(0);
  sftEpochs = $state(0);
  sftLearningRate = $state(0);
  grpoSteps = $state(0);
  heldOutItems = $state(0);
  lines = $state<string[]>([]);
  figures = $state<{ stage: string; result: HeldOut }[]>([]);
  report = $state.raw<BootstrapReport | null>(null);
  error = $state<string | null>(null);
  private controller: AbortController | null = null;

  constructor(
    private readonly source: EnvironmentsSource,
    defaults: Omit<BootstrapChoice, 'source'>,
  ) {
    this.demonstrations = defaults.demonstrations;
    this.sftEpochs = defaults.sftEpochs;
    this.sftLearningRate = defaults.sftLearningRate;
    this.grpoSteps = defaults.grpoSteps;
    this.heldOutItems = defaults.heldOutItems;
  }

  get available(): boolean {
    return typeof this.source.bootstrap === 'function';
  }

  readonly running = $derived(this.phase === 'running');

  async start(env: string): Promise<void> {
    if (!this.source.bootstrap || this.running) return;
    const controller = new AbortController();
    this.controller = controller;
    this.phase = 'running';
    this.lines = [];
    this.figures = [];
    this.report = null;
    this.error = null;
    try {
      const choice: BootstrapChoice = {
        source: this.demonstrationSource(),
        demonstrations: whole(this.demonstrations, 1),
        sftEpochs: whole(this.sftEpochs, 1),
        sftLearningRate: positive(this.sftLearningRate),
        grpoSteps: whole(this.grpoSteps, 0),
        heldOutItems: whole(this.heldOutItems, 1),
      };
      this.report = await this.source.bootstrap(env, choice, (event) => this.hear(event), controller.signal);
      this.phase = this.report.stopped ? 'cancelled' : 'done';
    } catch (err) {
      this.error = errorMessage(err);
      this.phase = controller.signal.aborted ? 'cancelled' : 'failed';
    } finally {
      this.controller = null;
    }
  }

  cancel(): void {
    this.controller?.abort();
  }

  private demonstrationSource(): BootstrapChoice['source'] {
    if (this.kind === 'expert') return { kind: 'expert' };
    if (this.kind === 'episodes') return { kind: 'episodes', runId: this.episodesRun.trim() || null };
    if (!/^https?:\/\//.test(this.endpoint.trim()) || !this.remoteModel.trim()) {
      throw new Error('Give the endpoint (e.g. http://127.0.0.1:8000/v1) and the model it serves.');
    }
    return { kind: 'remote', baseUrl: this.endpoint.trim(), model: this.remoteModel.trim() };
  }

  private hear(event: BootstrapEvent): void {
    if (event.type === 'stage') this.lines = [...this.lines, event.line];
    else if (event.type === 'held-out') this.figures = [...this.figures, { stage: event.stage, result: event.result }];
    else if (event.type === 'demonstration')
      this.count('demonstration', `demonstration ${event.done}/${event.total}, ${event.good} succeeded`);
    else if (event.type === 'sft-update')
      this.count('SFT update', `SFT update ${event.done}/${event.total}, loss ${event.loss.toFixed(3)}`);
    else if (event.type === 'run' && event.event.type === 'progress')
      this.count('GRPO update', `GRPO update ${event.event.done}/${event.event.total}`);
  }

  /** A counting line ("SFT update 3/18, …") replaces the one before it of its kind, so the list keeps the steps. */
  private count(kind: string, line: string): void {
    this.lines = this.lines.at(-1)?.startsWith(`${kind} `) ? [...this.lines.slice(0, -1), line] : [...this.lines, line];
  }
}

/** A size from a number field, as a whole number ≥ `min`; anything else is refused naming it. */
function whole(value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) throw new Error(`Sizes must be whole numbers ≥ ${min} (got ${value}).`);
  return value;
}

function positive(value: number): number {
  if (!(value > 0)) throw new Error(`The SFT learning rate must be above 0 (got ${value}).`);
  return value;
}
