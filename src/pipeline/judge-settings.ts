/**
 * How the Judges screen's in-browser switch reaches a run: through the run's config, written before
 * the run starts (and saved with it), never by the engine reading a UI setting while it runs.
 */
import type { RunConfig } from '../config/schema.ts';
import { getSetting, type Store } from '../store/index.ts';

/** The Judges screen's switch (settings store) for the in-browser ONNX judge. */
export const IN_BROWSER_JUDGE_SETTING = 'judges.in_browser';
/** The in-browser judge a run gets when the switch is on; `models/judge` is the shipped model (app assets in the browser, the folder in Node). */
export const IN_BROWSER_JUDGE = { type: 'model', id: 'onnx-judge', path: 'models/judge' } as const;

/** The config with the shipped ONNX judge in its ensemble (once: a config with a model judge is kept as it is). */
export function withInBrowserJudge(config: RunConfig): RunConfig {
  if (config.judge.judges.some((j) => j.type === 'model')) return config;
  const { judges, n_judges } = config.judge;
  return { ...config, judge: { ...config.judge, judges: [...judges, { ...IN_BROWSER_JUDGE }], n_judges: n_judges === null ? null : n_judges + 1 } };
}

/** The config a new run starts with: the one given, plus the in-browser judge while the switch is on. */
export async function configForNewRun(store: Store, config: RunConfig): Promise<RunConfig> {
  return (await getSetting<boolean>(store, IN_BROWSER_JUDGE_SETTING, false)) ? withInBrowserJudge(config) : config;
}
