/**
 * Lesson state: which run, update and group the reader picked (the example until a run has trained),
 * the settings they moved, which step they are on, and every number the steps show, recomputed from
 * the stored episodes by the trainer's own functions whenever a setting moves.
 */
import { clippedObjective } from '../../../pipeline/app/group-stats.ts';
import { exploreGroup, isFlatGroup, lessonKnobs, withKnobs } from '../../../pipeline/app/learn.ts';
import { errorMessage } from '../../lib/format.ts';
import { lessonDigits, type LessonDigits, type SampleObjective } from './checks.ts';
import { EXAMPLE_BATCH } from './example.ts';
import type { LearnSource, LessonBatch, LessonKnobs, LessonRun } from './source.ts';

export const LESSON_STEPS = [
  'The group',
  'Scores',
  'Mean and spread',
  'Advantages',
  'Credit per turn',
  'The clipped ratio',
  'The tokens it moved',
] as const;

export class LearnState {
  runs = $state<LessonRun[]>([]);
  /** Raw: a batch holds whole episodes (tokens and all), which need no deep proxies. */
  batch = $state.raw<LessonBatch>(EXAMPLE_BATCH);
  groupIndex = $state(0);
  knobs = $state<LessonKnobs>(lessonKnobs(EXAMPLE_BATCH.config));
  /**
   * How far the policy has moved since it sampled: each ratio becomes r·(1 ± drift), up for samples
   * with a positive advantage and down for the others, as further passes over the batch would move them.
   * Stored runs keep no ratios (1 on the first pass), so this is how the reader sees the clip bite.
   */
  drift = $state(0);
  step = $state(0);
  loading = $state(false);
  error = $state<string | null>(null);
  /** Answers to an older pick are dropped: picking fast never shows a stale update. */
  private request = 0;

  constructor(private readonly source: LearnSource) {}

  readonly run = $derived(this.runs.find((r) => r.id === this.batch.run_id) ?? null);
  readonly stored = $derived(this.batch.groups[Math.min(this.groupIndex, this.batch.groups.length - 1)] ?? null);
  readonly config = $derived(withKnobs(this.batch.config, this.knobs));
  readonly group = $derived(
    this.stored ? exploreGroup(this.stored.trajectories, this.batch.config, this.knobs, this.stored.task) : null,
  );
  /** Per group of the update, whether every sample scored the same at these settings (the update skips it). */
  readonly flatGroups = $derived(this.batch.groups.map((g) => isFlatGroup(g.trajectories, this.config)));
  readonly objectives = $derived<(SampleObjective | null)[]>(
    (this.group?.samples ?? []).map((s) => {
      if (s.advantage === null) return null;
      const base = this.batch.ratios?.[s.trajectory_id] ?? 1;
      const ratio = base * (1 + Math.sign(s.advantage) * (Number.isFinite(this.drift) ? this.drift : 0));
      return {
        ratio,
        ...clippedObjective(ratio, s.advantage, this.config.grpo.clip_epsilon, this.config.grpo.clip_epsilon_high),
      };
    }),
  );
  /** The decimals each kind of number of this group is shown with, so every formula reproduces by hand (precision.ts). */
  readonly digits = $derived<LessonDigits>(
    this.group
      ? lessonDigits(this.group, this.config.grpo.advantage, this.objectives)
      : { final: 3, parts: 3, advantage: 3, stats: 3 },
  );
  /** Other groups of the update whose walkthrough sample took more than one turn (pointed to from a one-turn group). */
  readonly multiTurnGroups = $derived(
    this.batch.groups.flatMap((g, i) =>
      i !== this.groupIndex && g.trajectories.some((t) => t.turn_spans.length > 1) ? [i] : [],
    ),
  );

  async load(): Promise<void> {
    try {
      this.runs = await this.source.runs();
      this.error = null;
    } catch (err) {
      this.error = errorMessage(err);
      return;
    }
    if (this.runs.length && this.batch.example) await this.pickRun(this.runs[0].id);
  }

  /** Shows the newest update of a run. */
  async pickRun(runId: string): Promise<void> {
    const run = this.runs.find((r) => r.id === runId);
    if (run) await this.pickUpdate(run.id, run.steps[0]);
  }

  async pickUpdate(runId: string, step: number): Promise<void> {
    const request = ++this.request;
    this.loading = true;
    try {
      const batch = await this.source.update(runId, Number(step));
      if (request !== this.request) return;
      if (!batch?.groups.length) throw new Error(`Update ${step} of this run has no stored groups to show.`);
      const sameRun = batch.run_id === this.batch.run_id;
      this.batch = batch;
      this.groupIndex = 0;
      // A new run starts from its own settings; another update of the same run keeps what the reader moved.
      if (!sameRun) this.knobs = lessonKnobs(batch.config);
      this.error = null;
    } catch (err) {
      if (request === this.request) this.error = errorMessage(err);
    } finally {
      if (request === this.request) this.loading = false;
    }
  }

  pickGroup(index: number): void {
    const i = Math.floor(Number(index));
    if (i >= 0 && i < this.batch.groups.length) this.groupIndex = i;
  }

  /** Back to the run's own settings: what the update actually used. */
  resetKnobs = () => {
    this.knobs = lessonKnobs(this.batch.config);
    this.drift = 0;
  };

  next = () => (this.step = Math.min(LESSON_STEPS.length - 1, this.step + 1));
  previous = () => (this.step = Math.max(0, this.step - 1));
}
