/**
 * Which charts the Train screen draws and which metrics (named as TRL logs them) feed each. A chart
 * either lists its metric keys or takes every key with a prefix (held-out success per environment,
 * clip ratios), so new environments appear without code changes.
 */

export interface ChartSpec {
  id: string;
  title: string;
  /** What a reader should look for. */
  hint: string;
  keys?: string[];
  /** Matches keys like `eval/<env>/success`; the label is the part the pattern captures. */
  pattern?: RegExp;
  /** Fixed y range, for rates. */
  range?: [number, number];
}

export const CHARTS: ChartSpec[] = [
  { id: 'reward', title: 'Reward', hint: 'mean judge score of the batch; should rise', keys: ['reward', 'reward_std'] },
  {
    id: 'eval',
    title: 'Held-out success',
    hint: 'success on test tasks per environment',
    pattern: /^eval\/(.+)\/success$/,
    range: [0, 1],
  },
  { id: 'loss', title: 'Loss', hint: 'GRPO surrogate loss; noisy by nature', keys: ['train/loss'] },
  { id: 'kl', title: 'KL to reference', hint: 'how far the adapter moved from the base model', keys: ['kl'] },
  {
    id: 'clip',
    title: 'Clip ratio',
    hint: 'share of tokens whose ratio hit the clip',
    pattern: /^clip_ratio\/(.+)$/,
    range: [0, 1],
  },
  { id: 'entropy', title: 'Entropy', hint: 'a collapse to 0 means the policy stopped exploring', keys: ['entropy'] },
  {
    id: 'length',
    title: 'Completion length',
    hint: 'mean tokens the policy wrote per episode',
    keys: ['completions/mean_length'],
  },
  {
    id: 'tool-failures',
    title: 'Tool failure rate',
    hint: 'share of tool calls that errored',
    keys: ['tools/failure_frequency'],
    range: [0, 1],
  },
];

export interface ResolvedSeries {
  key: string;
  label: string;
}

/** The series a chart shows, given every metric key seen so far. */
export function chartSeries(spec: ChartSpec, allKeys: readonly string[]): ResolvedSeries[] {
  if (spec.keys) return spec.keys.map((key) => ({ key, label: key }));
  const pattern = spec.pattern!;
  return allKeys.flatMap((key) => {
    const m = pattern.exec(key);
    return m ? [{ key, label: m[1] }] : [];
  });
}
