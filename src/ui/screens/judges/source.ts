/**
 * What the Judges screen needs: remote judge settings (the API key lives only in this browser's
 * IndexedDB settings), a connection test, the in-browser judge switch, and calibration.
 */
import type { SavedEndpointJudge } from '../../../pipeline/operations/judge-settings.ts';
import type { CalibrationItem } from '../../../contracts.ts';
import type { CalibrationMap } from '../../../config/schema.ts';

/** A judge over an OpenAI-compatible endpoint as the screen edits it: what judge-settings.ts saves (the key itself never comes back to the page). */
export type RemoteJudgeSettings = SavedEndpointJudge;

export interface InBrowserJudgeState {
  enabled: boolean;
  /** Why it cannot be enabled (model not shipped, backend too slow), or null. */
  unavailable: string | null;
}

export interface ConnectionResult {
  latency_ms: number;
  /** A short sample of what the model answered. */
  reply: string;
}

/** Agreement of one judge with gold labels, before and after its calibration map. */
export interface AgreementFigures {
  n: number;
  /** Items the judge could score (it may return null). */
  scored: number;
  spearman: number | null;
  krippendorff_alpha: number | null;
  mae_before: number | null;
  mae_after: number | null;
  /** The map fitted on the set (isotonic), which `useCalibration` saves for runs. */
  map: CalibrationMap;
}

export interface JudgesSource {
  /** `calibrated`: the judges with a calibration map saved for runs. */
  load(): Promise<{
    remotes: RemoteJudgeSettings[];
    inBrowser: InBrowserJudgeState;
    calibratable: string[];
    calibrated: string[];
  }>;
  /** Saves a remote judge; `apiKey` null keeps the stored key. */
  saveRemote(settings: Omit<RemoteJudgeSettings, 'hasKey'>, apiKey: string | null): Promise<void>;
  removeRemote(id: string): Promise<void>;
  forgetKey(id: string): Promise<void>;
  setInBrowser(enabled: boolean): Promise<void>;
  /** One tiny request to the endpoint; throws with a message saying what failed (DNS, CORS, 401, model name). */
  testConnection(settings: Omit<RemoteJudgeSettings, 'hasKey'>, apiKey: string | null): Promise<ConnectionResult>;
  calibrate(
    judgeId: string,
    items: CalibrationItem[],
    onProgress: (done: number, total: number) => void,
    signal: AbortSignal,
  ): Promise<AgreementFigures>;
  /** Saves a judge's map for runs: the Train screen's config takes it in (judge.calibration). */
  useCalibration(judgeId: string, map: CalibrationMap): Promise<void>;
  /** The maps saved for runs, as the calibration file `spindle calibrate` writes. */
  calibrationFile(): Promise<string>;
  /** Saves a calibration file's maps for runs; returns the judges it calibrates, or throws saying what is wrong with it. */
  loadCalibrationFile(text: string, fileName: string): Promise<string[]>;
}
