/**
 * How the Judges screen's switches reach a run: by editing the run config the Train screen shows (its
 * Form and YAML), which is then the one truth about who judges — the engine reads no UI setting, and
 * nothing is added to a run behind the config's back.
 */
import type { CalibrationMap, JudgeConfig, RubricCriterionConfig, RunConfig } from '../../config/schema.ts';
import { getSetting, type Store } from '../../store/index.ts';

/** The Judges screen's switch (settings store) for the in-browser ONNX judge. */
export const IN_BROWSER_JUDGE_SETTING = 'judges.in_browser';
/** The in-browser judge a run gets when the switch is on; `models/judge` is the shipped model (app assets in the browser, the folder in Node). */
export const IN_BROWSER_JUDGE = { type: 'model', id: 'onnx-judge', path: 'models/judge' } as const;

/** The Judges screen's saved remote judges (settings store); each key is under `secret.<id>`. */
export const REMOTE_JUDGES_SETTING = 'judges.remotes';

/** The calibration maps the Judges screen saved for runs (settings store): judge id → map. */
export const CALIBRATION_SETTING = 'judges.calibration';

/** What the Judges screen has switched on: the in-browser judge, and each saved remote judge with its own switch. */
export interface JudgeSwitches {
  inBrowser: boolean;
  /** `hasKey`: a key is saved under `secret.<id>` (a server without keys, such as a local one, has none). */
  remotes: SavedEndpointJudge[];
  /** Calibration maps saved for runs (fitted or loaded on the Judges screen), by judge id; absent: none. */
  calibration?: Record<string, CalibrationMap>;
}

/**
 * A judge over an OpenAI-compatible endpoint as the Judges screen saves it. `kind` (absent: `remote`)
 * says which: the remote rubric judge, a criteria rubric judge (`criteria`, `scale`) or a group judge
 * (`rubric`: how to compare a group; '' for the built-in text).
 */
export interface SavedEndpointJudge {
  id: string;
  base_url: string;
  model: string;
  enabled: boolean;
  hasKey: boolean;
  kind?: 'remote' | 'rubric' | 'group';
  criteria?: RubricCriterionConfig[];
  scale?: number;
  rubric?: string;
}

/** The run-config entry of a saved endpoint judge (its key, if any, under `secret.<id>`). */
function endpointJudgeConfig(r: SavedEndpointJudge): JudgeConfig {
  const endpoint = {
    id: r.id,
    base_url: r.base_url,
    model: r.model,
    api_key_env: r.hasKey ? `secret.${r.id}` : null,
    temperature: 0,
    timeout_ms: 30_000,
    max_concurrency: 4,
    max_retries: 3,
  };
  if (r.kind === 'rubric')
    return { type: 'rubric', ...endpoint, criteria: (r.criteria ?? []).map((c) => ({ ...c })), scale: r.scale ?? 10 };
  if (r.kind === 'group') return { type: 'group', ...endpoint, rubric: r.rubric ?? '' };
  return { type: 'remote', ...endpoint };
}

/**
 * The config's judges made to agree with the switches: a judge switched on is added (once, by id; an
 * entry the config already has is kept as written), a switched-off one is removed. Judges the screen
 * does not manage (rule, self, other model judges) are left alone. `n_judges` follows the count when set.
 * A saved calibration map replaces the config's map for the same judge; the config's other maps stay.
 */
export function applyJudgeSwitches(config: RunConfig, switches: JudgeSwitches): RunConfig {
  return withSavedCalibration(withSwitchedJudges(config, switches), switches.calibration ?? {});
}

function withSavedCalibration(config: RunConfig, saved: Record<string, CalibrationMap>): RunConfig {
  const current = config.judge.calibration;
  const changed = Object.entries(saved).some(([id, map]) => JSON.stringify(current[id]) !== JSON.stringify(map));
  return changed ? { ...config, judge: { ...config.judge, calibration: { ...current, ...saved } } } : config;
}

function withSwitchedJudges(config: RunConfig, switches: JudgeSwitches): RunConfig {
  const wanted = new Map<string, JudgeConfig | null>([
    [IN_BROWSER_JUDGE.id, switches.inBrowser ? { ...IN_BROWSER_JUDGE } : null],
  ]);
  for (const r of switches.remotes) {
    wanted.set(r.id, r.enabled ? endpointJudgeConfig(r) : null);
  }
  const managed = (j: JudgeConfig) =>
    wanted.has(j.id) &&
    (j.type === 'remote' ||
      j.type === 'rubric' ||
      j.type === 'group' ||
      (j.type === 'model' && j.id === IN_BROWSER_JUDGE.id));
  const kept = config.judge.judges.filter((j) => !managed(j) || wanted.get(j.id) !== null);
  const added = [...wanted.values()].filter((j): j is JudgeConfig => j !== null && !kept.some((k) => k.id === j.id));
  const judges = [...kept, ...added];
  if (judges.length === config.judge.judges.length && added.length === 0) return config;
  const { n_judges } = config.judge;
  const n =
    n_judges === null
      ? null
      : Math.max(1, Math.min(judges.length, n_judges + judges.length - config.judge.judges.length));
  return { ...config, judge: { ...config.judge, judges, n_judges: n } };
}

/** The switches as the Judges screen saved them. */
export async function readJudgeSwitches(store: Store): Promise<JudgeSwitches> {
  const remotes = await getSetting<Omit<JudgeSwitches['remotes'][number], 'hasKey'>[]>(
    store,
    REMOTE_JUDGES_SETTING,
    [],
  );
  return {
    inBrowser: await getSetting<boolean>(store, IN_BROWSER_JUDGE_SETTING, false),
    remotes: await Promise.all(
      remotes.map(async (r) => ({
        ...r,
        hasKey: (await getSetting<string | null>(store, `secret.${r.id}`, null)) !== null,
      })),
    ),
    calibration: await getSetting<Record<string, CalibrationMap>>(store, CALIBRATION_SETTING, {}),
  };
}
