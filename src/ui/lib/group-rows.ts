/**
 * A GRPO group as the group table (components/GroupTable.svelte) draws it: a row per sample, its turns
 * in columns. The Playground's sampled group and a stored trajectory's group are both read this way.
 */
import type { EpisodeTurns } from '../../pipeline/app/episode-turns.ts';
import type { EpisodeTurn } from './episode.ts';

export interface GroupRow {
  key: string;
  /** What the row says of the sample: "#2" (its seed as the tooltip). */
  label: string;
  seed: number;
  score: number | null;
  /** Its advantage in the group, or null (not judged yet, not trained on). */
  advantage: number | null;
  /** What it is doing while not finished ("running", "judging"), or null once done. */
  status: string | null;
  /** Its turns as they stand: finished ones are `annotated`'s, with credit and marks. */
  turns: EpisodeTurn[];
  annotated: EpisodeTurns | null;
  answer: string | null;
  /** Why it stopped, when it stopped without an answer. */
  finishReason: string | null;
  /** True while its last turn is still streaming. */
  streaming: boolean;
  /** The sample the reader came from (the opened trajectory), marked in the table. */
  current?: boolean;
}
