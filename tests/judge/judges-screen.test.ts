/**
 * The Judges screen's rubric and group judge cards (their state, src/ui/screens/judges/judges.svelte.ts):
 * added with starting values, a broken rubric refused before saving with the config validation's words,
 * saved with their kind, and turned into run-config entries that validate.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { validateRunConfig } from '../../src/config/validate.ts';
import { applyJudgeSwitches } from '../../src/pipeline/operations/judge-settings.ts';
import { JudgesState } from '../../src/ui/screens/judges/judges.svelte.ts';
import type { JudgesSource, RemoteJudgeSettings } from '../../src/ui/screens/judges/source.ts';

function memorySource() {
  const saved = new Map<string, Omit<RemoteJudgeSettings, 'hasKey'>>();
  const source: JudgesSource = {
    load: async () => ({
      remotes: [...saved.values()].map((r) => ({ ...r, hasKey: false })),
      inBrowser: { enabled: false, unavailable: null },
      calibratable: ['rule', ...saved.keys()],
      calibrated: [],
    }),
    async saveRemote(settings) {
      saved.set(settings.id, settings);
    },
    async removeRemote(id) {
      saved.delete(id);
    },
    async forgetKey() {},
    async setInBrowser() {},
    async testConnection() {
      return { latency_ms: 1, reply: 'ok' };
    },
    async calibrate(_id, items) {
      return {
        n: items.length,
        scored: items.length,
        spearman: null,
        krippendorff_alpha: null,
        mae_before: null,
        mae_after: null,
        map: { kind: 'identity' },
      };
    },
    async useCalibration() {},
    async calibrationFile() {
      return '';
    },
    async loadCalibrationFile() {
      return [];
    },
  };
  return { source, saved };
}

describe('rubric and group judges on the Judges screen', () => {
  it('adds a rubric judge with starting criteria, refuses a broken rubric, and saves it with its kind', async () => {
    const { source, saved } = memorySource();
    const state = new JudgesState(source);
    await state.load();
    state.addRubric();
    const draft = state.remotes[0];
    expect(draft).toMatchObject({ id: 'rubric-1', kind: 'rubric', scale: 5 });
    expect(draft.criteria.length).toBeGreaterThan(0);
    draft.criteria[0].weight = -1;
    await state.save(draft);
    expect(draft.saveError).toMatch(/weight.*≥ 0/);
    expect(saved.size).toBe(0);
    draft.criteria[0].weight = 2;
    draft.addCriterion();
    draft.criteria[draft.criteria.length - 1].description = 'Cites its sources.';
    await state.save(draft);
    expect(draft.saveError).toBeNull();
    const stored = saved.get('rubric-1')!;
    expect(stored).toMatchObject({ kind: 'rubric', scale: 5 });
    expect(stored.criteria).toHaveLength(draft.criteria.length);
    await state.load();
    expect(state.remotes[0]).toMatchObject({ kind: 'rubric', scale: 5 });
    expect(state.calibratable).toContain('rubric-1');
  });

  it('adds a group judge, and the saved judges become config entries that validate', async () => {
    const { source, saved } = memorySource();
    const state = new JudgesState(source);
    state.addRubric();
    state.addGroup();
    state.addRemote();
    const group = state.remotes[1];
    expect(group).toMatchObject({ id: 'group-2', kind: 'group', rubric: '' });
    group.rubric = '  Prefer answers that show their working.  ';
    for (const d of state.remotes) await state.save(d);
    expect(saved.get('group-2')).toMatchObject({ kind: 'group', rubric: 'Prefer answers that show their working.' });
    expect(saved.get('remote-3')).toEqual({
      id: 'remote-3',
      base_url: 'https://api.openai.com/v1',
      model: 'gpt-4o-mini',
      enabled: true,
    });

    const config = applyJudgeSwitches(DEFAULT_CONFIG, {
      inBrowser: false,
      remotes: [...saved.values()].map((r) => ({ ...r, hasKey: r.id === 'group-2' })),
    });
    expect(config.judge.judges.map((j) => [j.type, j.id])).toEqual([
      ['rule', 'rule'],
      ['rubric', 'rubric-1'],
      ['group', 'group-2'],
      ['remote', 'remote-3'],
    ]);
    expect(config.judge.judges[2]).toMatchObject({
      api_key_env: 'secret.group-2',
      rubric: 'Prefer answers that show their working.',
    });
    expect(validateRunConfig(config).errors).toEqual([]);
    // Switched off, they leave the config again.
    const off = applyJudgeSwitches(config, {
      inBrowser: false,
      remotes: [...saved.values()].map((r) => ({ ...r, enabled: false, hasKey: false })),
    });
    expect(off.judge.judges).toEqual([{ type: 'rule', id: 'rule' }]);
  });
});
