/** Judges screen state: editable remote judges, connection tests, the in-browser judge, calibration runs. */
import { errorMessage } from '../../lib/format.ts';
import { baseUrlProblem } from '../../lib/url.ts';
import type { CalibrationItem } from '../../../contracts.ts';
import { readCalibrationSet, type JsonlProblem } from '../../../pipeline/app/calibration-files.ts';
import type {
  AgreementFigures,
  ConnectionResult,
  InBrowserJudgeState,
  JudgesSource,
  RemoteJudgeSettings,
} from './source.ts';
import { criteriaProblem } from '../../../config/validate.ts';
import type { RubricCriterionConfig } from '../../../config/schema.ts';

/** A judge over an OpenAI-compatible endpoint being edited (remote, rubric or group): the form fields, the unsaved key, and the last test result. */
export class RemoteJudgeDraft {
  id = $state('');
  base_url = $state('');
  model = $state('');
  enabled = $state(true);
  kind = $state<JudgeKind>('remote');
  /** A rubric judge's criteria and the points each is scored out of. */
  criteria = $state<RubricCriterionConfig[]>([]);
  scale = $state(5);
  /** A group judge's instructions ('' for the built-in ones). */
  rubric = $state('');
  hasKey = $state(false);
  apiKey = $state('');
  testing = $state(false);
  test = $state<{ ok: true; result: ConnectionResult } | { ok: false; message: string } | null>(null);
  saveError = $state<string | null>(null);
  saved = $state(false);

  constructor(s: RemoteJudgeSettings) {
    this.id = s.id;
    this.base_url = s.base_url;
    this.model = s.model;
    this.enabled = s.enabled;
    this.hasKey = s.hasKey;
    this.kind = s.kind ?? 'remote';
    this.criteria = (s.criteria ?? []).map((c) => ({ ...c }));
    this.scale = s.scale ?? 5;
    this.rubric = s.rubric ?? '';
  }

  readonly urlError = $derived(baseUrlProblem(this.base_url));
  /** What is wrong with a rubric judge's criteria or scale (the config validation's words), or null. */
  readonly rubricError = $derived.by(() => {
    if (this.kind !== 'rubric') return null;
    const problem = criteriaProblem($state.snapshot(this.criteria));
    if (problem) return `The rubric ${problem}`;
    return Number.isFinite(this.scale) && this.scale > 0
      ? null
      : 'The points per criterion must be a number above 0 (e.g. 5).';
  });

  addCriterion(): void {
    let n = this.criteria.length + 1;
    while (this.criteria.some((c) => c.name === `criterion ${n}`)) n++;
    this.criteria.push({ name: `criterion ${n}`, description: '', weight: 1 });
  }

  removeCriterion(index: number): void {
    this.criteria.splice(index, 1);
  }

  settings(): Omit<RemoteJudgeSettings, 'hasKey'> {
    const base = { id: this.id, base_url: this.base_url.trim(), model: this.model.trim(), enabled: this.enabled };
    if (this.kind === 'rubric') {
      const criteria = ($state.snapshot(this.criteria) as RubricCriterionConfig[]).map((c) => ({
        name: c.name.trim(),
        description: c.description.trim(),
        weight: Number(c.weight),
      }));
      return { ...base, kind: 'rubric', criteria, scale: Number(this.scale) };
    }
    if (this.kind === 'group') return { ...base, kind: 'group', rubric: this.rubric.trim() };
    return base;
  }
}

export type JudgeKind = NonNullable<RemoteJudgeSettings['kind']>;

/** A starting rubric for a new rubric judge: edit the criteria to fit the task. */
const STARTER_CRITERIA: RubricCriterionConfig[] = [
  {
    name: 'correctness',
    description: 'The final answer does what the task asks, with no factual or logical errors.',
    weight: 2,
  },
  { name: 'evidence', description: 'The answer rests on what the tools returned, not on guesses.', weight: 1 },
  { name: 'clarity', description: 'The final answer is clear and complete, without padding.', weight: 1 },
];

export class JudgesState {
  remotes = $state<RemoteJudgeDraft[]>([]);
  inBrowser = $state<InBrowserJudgeState>({ enabled: false, unavailable: 'loading…' });
  calibratable = $state<string[]>([]);
  loadError = $state<string | null>(null);
  inBrowserError = $state<string | null>(null);

  calibrationJudge = $state('');
  calibrationItems = $state<CalibrationItem[]>([]);
  calibrationFileName = $state<string | null>(null);
  calibrationFileErrors = $state<JsonlProblem[]>([]);
  calibrationProgress = $state<{ done: number; total: number } | null>(null);
  calibrationResult = $state<AgreementFigures | null>(null);
  calibrationError = $state<string | null>(null);
  /** Judges with a calibration map saved for runs, and what saving or loading one last said. */
  calibrated = $state<string[]>([]);
  savedCalibrationNote = $state<string | null>(null);
  savedCalibrationError = $state<string | null>(null);
  private calibrationAbort: AbortController | null = null;

  constructor(private readonly source: JudgesSource) {}

  async load(): Promise<void> {
    try {
      const state = await this.source.load();
      // Drafts added while the settings were loading are kept, not overwritten.
      const unsaved = this.remotes.filter((d) => !state.remotes.some((r) => r.id === d.id));
      this.remotes = [...state.remotes.map((r) => new RemoteJudgeDraft(r)), ...unsaved];
      this.inBrowser = state.inBrowser;
      this.calibratable = state.calibratable;
      this.calibrationJudge ||= state.calibratable[0] ?? '';
      this.calibrated = state.calibrated;
      this.loadError = null;
    } catch (err) {
      this.loadError = errorMessage(err);
    }
  }

  addRemote(kind: JudgeKind = 'remote'): void {
    let n = this.remotes.length + 1;
    while (this.remotes.some((r) => r.id === `${kind}-${n}`)) n++;
    const extra =
      kind === 'rubric'
        ? { kind, criteria: STARTER_CRITERIA.map((c) => ({ ...c })), scale: 5 }
        : kind === 'group'
          ? { kind, rubric: '' }
          : {};
    this.remotes.push(
      new RemoteJudgeDraft({
        id: `${kind}-${n}`,
        base_url: 'https://api.openai.com/v1',
        model: 'gpt-4o-mini',
        enabled: true,
        hasKey: false,
        ...extra,
      }),
    );
  }

  /** A rubric judge: named, weighted criteria over an OpenAI-compatible endpoint. */
  addRubric(): void {
    this.addRemote('rubric');
  }

  /** A group judge: scores each GRPO group in one call, its trajectories against each other. */
  addGroup(): void {
    this.addRemote('group');
  }

  async save(draft: RemoteJudgeDraft): Promise<void> {
    draft.saved = false;
    if (draft.urlError || draft.rubricError) {
      draft.saveError = draft.urlError ?? draft.rubricError;
      return;
    }
    try {
      await this.source.saveRemote(draft.settings(), draft.apiKey || null);
      if (draft.apiKey) draft.hasKey = true;
      draft.apiKey = '';
      draft.saveError = null;
      draft.saved = true;
    } catch (err) {
      draft.saveError = errorMessage(err);
    }
  }

  async remove(draft: RemoteJudgeDraft): Promise<void> {
    try {
      await this.source.removeRemote(draft.id);
      this.remotes = this.remotes.filter((r) => r !== draft);
    } catch (err) {
      draft.saveError = errorMessage(err);
    }
  }

  async forgetKey(draft: RemoteJudgeDraft): Promise<void> {
    try {
      await this.source.forgetKey(draft.id);
      draft.hasKey = false;
      draft.apiKey = '';
    } catch (err) {
      draft.saveError = errorMessage(err);
    }
  }

  async testConnection(draft: RemoteJudgeDraft): Promise<void> {
    if (draft.urlError) {
      draft.test = { ok: false, message: draft.urlError };
      return;
    }
    draft.testing = true;
    try {
      draft.test = { ok: true, result: await this.source.testConnection(draft.settings(), draft.apiKey || null) };
    } catch (err) {
      draft.test = { ok: false, message: errorMessage(err) };
    } finally {
      draft.testing = false;
    }
  }

  async setInBrowser(enabled: boolean): Promise<void> {
    try {
      await this.source.setInBrowser(enabled);
      this.inBrowser = { ...this.inBrowser, enabled };
      this.inBrowserError = null;
    } catch (err) {
      this.inBrowserError = errorMessage(err);
    }
  }

  /** Reads the labelled file; bad lines are listed and the good ones kept. */
  async loadCalibrationFile(file: File): Promise<void> {
    this.calibrationResult = null;
    this.calibrationError = null;
    this.calibrationFileName = file.name;
    const { items, problems } = readCalibrationSet(await file.text());
    this.calibrationItems = items;
    this.calibrationFileErrors = problems;
  }

  async runCalibration(): Promise<void> {
    if (!this.calibrationItems.length || !this.calibrationJudge) return;
    this.calibrationAbort?.abort();
    const abort = new AbortController();
    this.calibrationAbort = abort;
    this.calibrationError = null;
    this.calibrationResult = null;
    this.calibrationProgress = { done: 0, total: this.calibrationItems.length };
    try {
      this.calibrationResult = await this.source.calibrate(
        this.calibrationJudge,
        $state.snapshot(this.calibrationItems) as CalibrationItem[],
        (done, total) => (this.calibrationProgress = { done, total }),
        abort.signal,
      );
    } catch (err) {
      if (!abort.signal.aborted) this.calibrationError = errorMessage(err);
    } finally {
      this.calibrationProgress = null;
    }
  }

  cancelCalibration(): void {
    this.calibrationAbort?.abort();
  }

  /** Saves the map just fitted for runs: the Train screen's config takes it in (judge.calibration). */
  async useCalibration(): Promise<void> {
    const result = this.calibrationResult;
    if (!result) return;
    await this.savedCalibration(async () => {
      await this.source.useCalibration(this.calibrationJudge, $state.snapshot(result.map));
      return `Runs now calibrate ${this.calibrationJudge}'s votes with this map.`;
    });
  }

  /** The maps saved for runs, as a calibration file to download (`spindle train --calibration` reads it). */
  async calibrationFile(): Promise<{ fileName: string; mime: string; text: string } | null> {
    try {
      return { fileName: 'calibration.json', mime: 'application/json', text: await this.source.calibrationFile() };
    } catch (err) {
      this.savedCalibrationError = errorMessage(err);
      return null;
    }
  }

  /** Saves a calibration file's maps (from `spindle calibrate`, or downloaded here) for runs. */
  async loadSavedCalibration(file: File): Promise<void> {
    const text = await file.text();
    await this.savedCalibration(async () => {
      const ids = await this.source.loadCalibrationFile(text, file.name);
      return ids.length
        ? `Runs now calibrate ${ids.join(', ')} with the maps of ${file.name}.`
        : `${file.name} holds no maps.`;
    });
  }

  private async savedCalibration(save: () => Promise<string>): Promise<void> {
    this.savedCalibrationError = null;
    this.savedCalibrationNote = null;
    try {
      this.savedCalibrationNote = await save();
      this.calibrated = (await this.source.load()).calibrated;
    } catch (err) {
      this.savedCalibrationError = errorMessage(err);
    }
  }
}
