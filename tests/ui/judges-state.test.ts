/** JudgesState over an in-memory JudgesSource: editing, saving and testing remote judges, the in-browser switch, calibration. */
import { describe, expect, it } from 'vitest';
import type { CalibrationMap } from '../../src/config/schema.ts';
import type { CalibrationItem } from '../../src/contracts.ts';
import { JudgesState } from '../../src/ui/screens/judges/judges.svelte.ts';
import type { JudgesSource, RemoteJudgeSettings } from '../../src/ui/screens/judges/source.ts';
import { makeTrajectory } from '../store/fixtures.ts';

function memorySource() {
  const saved = new Map<string, Omit<RemoteJudgeSettings, 'hasKey'>>();
  const keys = new Map<string, string>();
  const calls: string[] = [];
  let inBrowser = false;
  const calibrated = new Map<string, CalibrationMap>();
  const source: JudgesSource = {
    load: async () => ({
      remotes: [...saved.values()].map((r) => ({ ...r, hasKey: keys.has(r.id) })),
      inBrowser: { enabled: inBrowser, unavailable: null },
      calibratable: ['rule', ...saved.keys()],
      calibrated: [...calibrated.keys()],
    }),
    async saveRemote(settings, apiKey) {
      saved.set(settings.id, settings);
      if (apiKey) keys.set(settings.id, apiKey);
    },
    async removeRemote(id) {
      saved.delete(id);
      keys.delete(id);
    },
    async forgetKey(id) {
      keys.delete(id);
    },
    async setInBrowser(enabled) {
      inBrowser = enabled;
    },
    async testConnection(settings, apiKey) {
      calls.push(`test ${settings.base_url} ${apiKey ?? keys.get(settings.id) ?? '-'}`);
      if (settings.model === 'missing') throw new Error('HTTP 404: no such model');
      return { latency_ms: 12, reply: 'ok' };
    },
    async calibrate(judgeId, items, onProgress, signal) {
      for (let i = 1; i <= items.length; i++) {
        await Promise.resolve(); // an item is scored asynchronously: a cancel can land in between
        signal.throwIfAborted();
        onProgress(i, items.length);
      }
      calls.push(`calibrate ${judgeId} ${items.length}`);
      return {
        n: items.length,
        scored: items.length,
        spearman: 1,
        krippendorff_alpha: 1,
        mae_before: 0,
        mae_after: null,
        map: { kind: 'affine', a: 1, b: 0 },
      };
    },
    async useCalibration(judgeId, map) {
      calibrated.set(judgeId, map);
    },
    async calibrationFile() {
      return JSON.stringify({ version: 1, maps: Object.fromEntries(calibrated) });
    },
    async loadCalibrationFile(text, fileName) {
      const maps = (JSON.parse(text) as { maps?: Record<string, CalibrationMap> }).maps;
      if (!maps) throw new Error(`${fileName}: Calibration file: "maps" must map judge ids to calibration maps`);
      for (const [id, map] of Object.entries(maps)) calibrated.set(id, map);
      return Object.keys(maps);
    },
  };
  return { source, saved, keys, calls };
}

const items: CalibrationItem[] = [
  { trajectory: makeTrajectory(), gold: 1 },
  { trajectory: makeTrajectory(), gold: 0 },
];

describe('JudgesState', () => {
  it('adds a remote judge, refuses a bad URL before saving, saves the key once and forgets it', async () => {
    const { source, saved, keys } = memorySource();
    const state = new JudgesState(source);
    await state.load();
    state.addRemote();
    const draft = state.remotes[0];
    expect(draft.id).toBe('remote-1');
    draft.base_url = 'http://example.com/v1';
    await state.save(draft);
    expect(draft.saveError).toMatch(/https/);
    expect(saved.size).toBe(0);
    draft.base_url = ' https://judge.example/v1 ';
    draft.apiKey = 'sk-1';
    await state.save(draft);
    expect(saved.get('remote-1')?.base_url).toBe('https://judge.example/v1');
    expect(keys.get('remote-1')).toBe('sk-1');
    expect(draft).toMatchObject({ saved: true, hasKey: true, apiKey: '', saveError: null });
    await state.forgetKey(draft);
    expect(keys.has('remote-1')).toBe(false);
    expect(draft.hasKey).toBe(false);
  });

  it('keeps an unsaved draft across a reload and lists saved judges as calibratable', async () => {
    const { source } = memorySource();
    const state = new JudgesState(source);
    state.addRemote();
    state.addRemote();
    await state.save(state.remotes[0]);
    await state.load();
    expect(state.remotes.map((r) => r.id)).toEqual(['remote-1', 'remote-2']);
    expect(state.calibratable).toEqual(['rule', 'remote-1']);
    expect(state.calibrationJudge).toBe('rule');
    await state.remove(state.remotes[0]);
    await state.load();
    expect(state.remotes.map((r) => r.id)).toEqual(['remote-2']);
  });

  it('tests a connection with the typed key, else the saved one, and shows a failure as a message', async () => {
    const { source, calls } = memorySource();
    const state = new JudgesState(source);
    state.addRemote();
    const draft = state.remotes[0];
    draft.apiKey = 'typed';
    await state.testConnection(draft);
    expect(draft.test).toEqual({ ok: true, result: { latency_ms: 12, reply: 'ok' } });
    draft.model = 'missing';
    draft.apiKey = '';
    await state.testConnection(draft);
    expect(draft.test).toEqual({ ok: false, message: 'HTTP 404: no such model' });
    expect(draft.testing).toBe(false);
    expect(calls).toEqual(['test https://api.openai.com/v1 typed', 'test https://api.openai.com/v1 -']);
  });

  it('switches the in-browser judge and reports it on the next load', async () => {
    const { source } = memorySource();
    const state = new JudgesState(source);
    await state.setInBrowser(true);
    expect(state.inBrowser.enabled).toBe(true);
    const reloaded = new JudgesState(source);
    expect(reloaded.inBrowser.unavailable).toBe('loading…');
    await reloaded.load();
    expect(reloaded.inBrowser).toEqual({ enabled: true, unavailable: null });
  });

  it('runs a calibration with progress, and a cancelled one leaves no error and no result', async () => {
    const { source, calls } = memorySource();
    const state = new JudgesState(source);
    await state.load();
    state.calibrationItems = items;
    const running = state.runCalibration();
    expect(state.calibrationProgress).toEqual({ done: 0, total: 2 });
    await running;
    expect(state.calibrationResult).toMatchObject({ n: 2, spearman: 1 });
    expect(state.calibrationProgress).toBeNull();
    expect(calls).toEqual(['calibrate rule 2']);
    const again = state.runCalibration();
    state.cancelCalibration();
    await again;
    expect({
      result: state.calibrationResult,
      error: state.calibrationError,
      progress: state.calibrationProgress,
    }).toEqual({ result: null, error: null, progress: null });
  });

  it('uses a fitted map in runs, saves the maps as a file and loads a file again, saying which judges it calibrates', async () => {
    const { source } = memorySource();
    const state = new JudgesState(source);
    await state.load();
    expect(state.calibrated).toEqual([]);
    state.calibrationItems = items;
    await state.runCalibration();
    await state.useCalibration();
    expect(state.calibrated).toEqual(['rule']);
    expect(state.savedCalibrationNote).toBe("Runs now calibrate rule's votes with this map.");
    const file = await state.calibrationFile();
    expect(file).toMatchObject({ fileName: 'calibration.json', mime: 'application/json' });
    expect(JSON.parse(file!.text).maps).toEqual({ rule: { kind: 'affine', a: 1, b: 0 } });

    const other = new JudgesState(memorySource().source);
    await other.load();
    await other.loadSavedCalibration(new File([file!.text], 'calibration.json'));
    expect(other.calibrated).toEqual(['rule']);
    expect(other.savedCalibrationNote).toBe('Runs now calibrate rule with the maps of calibration.json.');
    await other.loadSavedCalibration(new File(['{}'], 'empty.json'));
    expect(other.savedCalibrationError).toMatch(/^empty\.json: Calibration file/);
    expect(other.savedCalibrationNote).toBeNull();
  });
});
