/**
 * Lesson state: the latest batch (live from the run, or the example), which group is shown, which
 * of the steps the reader is on, and the numbers each step shows, computed with the trainer's
 * own advantage math.
 */
import { clippedObjective, groupStats } from '../../../pipeline/app/group-stats.ts';
import { errorMessage } from '../../lib/format.ts';
import { EXAMPLE_BATCH } from './example.ts';
import type { LearnSource, LessonBatch } from './source.ts';

export const LESSON_STEPS = ['The group', 'Scores', 'Mean and spread', 'Advantages', 'Credit per turn', 'The clipped ratio', 'The tokens it moved'] as const;

export class LearnState {
  batch = $state<LessonBatch>(EXAMPLE_BATCH);
  groupIndex = $state(0);
  step = $state(0);
  error = $state<string | null>(null);
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly source: LearnSource) {}

  readonly group = $derived(this.batch.groups[Math.min(this.groupIndex, this.batch.groups.length - 1)] ?? null);
  readonly stats = $derived(this.group ? groupStats(this.group.samples.map((s) => s.score), this.batch.advantage, this.batch.reward_scale) : null);
  /** Other groups of the batch whose walkthrough sample took more than one turn (pointed to from a one-turn group). */
  readonly multiTurnGroups = $derived(this.batch.groups.flatMap((g, i) => ((g.credit?.turns.length ?? 0) > 1 && i !== this.groupIndex ? [i] : [])));
  readonly objectives = $derived(
    this.group && this.stats
      ? this.group.samples.map((s, i) => clippedObjective(s.ratio ?? 1, this.stats!.advantages[i], this.batch.clip_epsilon, this.batch.clip_epsilon_high))
      : [],
  );

  async load(): Promise<void> {
    try {
      const latest = await this.source.latest();
      if (latest) this.show(latest);
      this.error = null;
    } catch (err) {
      this.error = errorMessage(err);
    }
    this.unsubscribe ??= this.source.subscribe((b) => {
      // Keep the reader's place: a new batch replaces the numbers, not the step they are on.
      this.show(b);
    });
  }

  dispose(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  private show(batch: LessonBatch): void {
    if (!batch.groups.length) return;
    this.batch = batch;
    if (this.groupIndex >= batch.groups.length) this.groupIndex = 0;
  }

  next = () => (this.step = Math.min(LESSON_STEPS.length - 1, this.step + 1));
  previous = () => (this.step = Math.max(0, this.step - 1));
}
