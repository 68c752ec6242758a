/** Judges screen state: editable remote judges, connection tests, the in-browser judge, calibration runs. */
import { errorMessage } from '../../lib/format.ts';
import { baseUrlProblem } from '../../lib/url.ts';
import type { LineError } from '../../lib/jsonl.ts';
import type { CalibrationItem } from '../../../contracts.ts';
import { parseCalibrationFile } from './calibration-file.ts';
import type { AgreementFigures, ConnectionResult, InBrowserJudgeState, JudgesSource, RemoteJudgeSettings } from './source.ts';

/** A remote judge being edited: the form fields, the unsaved key, and the last test result. */
export class RemoteJudgeDraft {
  id = $state('');
  base_url = $state('');
  model = $state('');
  enabled = $state(true);
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
  }

  readonly urlError = $derived(baseUrlProblem(this.base_url));

  settings() {
    return { id: this.id, base_url: this.base_url.trim(), model: this.model.trim(), enabled: this.enabled };
  }
}

export class JudgesState {
  remotes = $state<RemoteJudgeDraft[]>([]);
  inBrowser = $state<InBrowserJudgeState>({ enabled: false, unavailable: 'loading…' });
  calibratable = $state<string[]>([]);
  loadError = $state<string | null>(null);
  inBrowserError = $state<string | null>(null);

  calibrationJudge = $state('');
  calibrationItems = $state<CalibrationItem[]>([]);
  calibrationFileName = $state<string | null>(null);
  calibrationFileErrors = $state<LineError[]>([]);
  calibrationProgress = $state<{ done: number; total: number } | null>(null);
  calibrationResult = $state<AgreementFigures | null>(null);
  calibrationError = $state<string | null>(null);
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
      this.loadError = null;
    } catch (err) {
      this.loadError = errorMessage(err);
    }
  }

  addRemote(): void {
    let n = this.remotes.length + 1;
    while (this.remotes.some((r) => r.id === `remote-${n}`)) n++;
    this.remotes.push(new RemoteJudgeDraft({ id: `remote-${n}`, base_url: 'https://api.openai.com/v1', model: 'gpt-4o-mini', enabled: true, hasKey: false }));
  }

  async save(draft: RemoteJudgeDraft): Promise<void> {
    draft.saved = false;
    if (draft.urlError) {
      draft.saveError = draft.urlError;
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
    const { items, errors } = parseCalibrationFile(await file.text());
    this.calibrationItems = items;
    this.calibrationFileErrors = errors;
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
}
