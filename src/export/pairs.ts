/**
 * SFT and DPO files from scored groups, like Atropos's `atropos-sft-gen` / `atropos-dpo-gen` with
 * `--save-messages`: per group, sort by score; SFT keeps the top n; DPO pairs each of the top n with a
 * lower-scoring sample at least `minScoreGap` below it. Differences from Atropos: the rejected sample
 * is the lowest-scoring one left (deterministic, no random choice), and rows also carry TRL's
 * conversational preference fields (`prompt`, `chosen`, `rejected`) so `DPOTrainer` reads the file.
 */
import type { ChatMessage, ScoredGroup } from '../contracts.ts';

export interface PairOptions {
  /** SFT: samples kept per group; DPO: pairs per group (Atropos default 3). */
  topN?: number;
  /** SFT: keep only samples scoring more than this above the group minimum. DPO: chosen − rejected must exceed it. */
  minScoreGap?: number;
  /** Keep samples with score ≤ 0 (Atropos drops them unless --allow-negative-scores). */
  allowNonPositive?: boolean;
}

/** `{"messages": [...], "score": s}` per line — Atropos's SFT format, also TRL's conversational LM format. */
export interface SftRow {
  messages: ChatMessage[];
  score: number;
}

/** Atropos's `pos`/`neg`/`score` plus TRL's `prompt`/`chosen`/`rejected` (implicit-prompt split at the last shared message). */
export interface DpoRow {
  pos: ChatMessage[];
  neg: ChatMessage[];
  score: number;
  neg_score: number;
  prompt: ChatMessage[];
  chosen: ChatMessage[];
  rejected: ChatMessage[];
}

function samples(group: ScoredGroup): { messages: ChatMessage[]; score: number }[] {
  if (!group.messages)
    throw new Error('this scored group has no messages: SFT/DPO export needs them (Atropos --save-messages)');
  return group.scores.map((score, i) => ({ messages: group.messages![i], score })).sort((a, b) => b.score - a.score);
}

export function sftRowsFromGroup(group: ScoredGroup, options: PairOptions = {}): SftRow[] {
  const { topN = 3, minScoreGap = 0, allowNonPositive = false } = options;
  const min = Math.min(...group.scores);
  return samples(group)
    .filter((s) => allowNonPositive || s.score > 0)
    .filter((s) => minScoreGap <= 0 || s.score - min > minScoreGap)
    .slice(0, topN)
    .map(({ messages, score }) => ({ messages, score }));
}

function sharedPrefix(a: ChatMessage[], b: ChatMessage[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i].role === b[i].role && a[i].content === b[i].content) i++;
  return i;
}

export function dpoRowsFromGroup(group: ScoredGroup, options: PairOptions = {}): DpoRow[] {
  const { topN = 3, minScoreGap = 0.5, allowNonPositive = false } = options;
  const sorted = samples(group);
  const rejectable = [...sorted].reverse().slice(0, Math.max(topN, 1)); // worst first, as Atropos limits negatives to n
  const chosen = sorted.filter((s) => allowNonPositive || s.score > 0);
  const rows: DpoRow[] = [];
  for (const pos of chosen.slice(0, topN)) {
    const k = rejectable.findIndex((neg) => neg.score < pos.score - minScoreGap);
    if (k < 0) continue;
    const [neg] = rejectable.splice(k, 1);
    const p = sharedPrefix(pos.messages, neg.messages);
    rows.push({
      pos: pos.messages,
      neg: neg.messages,
      score: pos.score,
      neg_score: neg.score,
      prompt: pos.messages.slice(0, p),
      chosen: pos.messages.slice(p),
      rejected: neg.messages.slice(p),
    });
  }
  return rows;
}

export function sftRows(groups: Iterable<ScoredGroup>, options?: PairOptions): SftRow[] {
  return [...groups].flatMap((g) => sftRowsFromGroup(g, options));
}

export function dpoRows(groups: Iterable<ScoredGroup>, options?: PairOptions): DpoRow[] {
  return [...groups].flatMap((g) => dpoRowsFromGroup(g, options));
}
