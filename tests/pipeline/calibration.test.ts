/**
 * A calibration saved and loaded again, in the app and between the app and the CLI: the Judges screen's
 * operations fit a judge's map and save it for runs, write the maps as a file and read one back; the
 * Train screen's config takes the saved maps in (judge.calibration), and a run's group step calibrates
 * every vote with them, keeping the raw score.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { stringifyRunConfig } from '../../src/config/yaml.ts';
import { validateRunConfig } from '../../src/config/validate.ts';
import { parseRunConfigYaml } from '../../src/config/yaml.ts';
import type { JudgeVote } from '../../src/contracts.ts';
import { applyCalibration } from '../../src/judge/calibration-map.ts';
import { createGroupStep } from '../../src/judge/group-step.ts';
import { judgeOperations } from '../../src/pipeline/app/judges.ts';
import { calibrateJudges, withCalibration } from '../../src/pipeline/operations/calibration.ts';
import { applyJudgeSwitches, readJudgeSwitches } from '../../src/pipeline/operations/judge-settings.ts';
import { openStore } from '../../src/store/index.ts';
import { makeTask, makeTrajectory } from '../judge/fixtures.ts';

const labelled = [0.1, 0.9].map((gold, i) => ({
  trajectory: makeTrajectory({ id: `l${i}`, final_response: gold > 0.5 ? '4' : null }),
  gold,
}));
const setText = labelled.map((item) => JSON.stringify(item)).join('\n');
const vote = (judge_id: string, score: number | null): JudgeVote => ({ judge_id, score, rationale: '', latency_ms: 0 });

async function screen() {
  const store = await openStore({ factory: new IDBFactory() });
  return { store, ops: judgeOperations(async () => store) };
}

describe('saving and loading a calibration', () => {
  it('the Judges screen fits a map, saves it for runs, and the Train screen config takes it in', async () => {
    const { store, ops } = await screen();
    const figures = await ops.calibrate('rule', labelled, () => {}, new AbortController().signal);
    expect(figures.map.kind).toBe('isotonic');
    expect((await ops.load()).calibrated).toEqual([]);
    await ops.useCalibration('rule', figures.map);
    expect((await ops.load()).calibrated).toEqual(['rule']);
    const config = applyJudgeSwitches(DEFAULT_CONFIG, await readJudgeSwitches(store));
    expect(config.judge.calibration).toEqual({ rule: figures.map });
    // The same maps again change nothing; the config the user wrote is kept as it is.
    expect(applyJudgeSwitches(config, await readJudgeSwitches(store))).toBe(config);
    expect(validateRunConfig(parseRunConfigYaml(stringifyRunConfig(config)).config).config?.judge.calibration).toEqual({
      rule: figures.map,
    });
    store.db.close();
  });

  it("a file the screen saves loads again, in another browser and in the CLI, and the CLI's file loads in the screen", async () => {
    const first = await screen();
    const map = { kind: 'affine' as const, a: 0.5, b: 0.25 };
    await first.ops.useCalibration('remote-1', map);
    const text = await first.ops.calibrationFile();
    expect(JSON.parse(text)).toEqual({ version: 1, method: 'affine', maps: { 'remote-1': map } });

    const second = await screen();
    expect(await second.ops.loadCalibrationFile(text, 'calibration.json')).toEqual(['remote-1']);
    expect(await second.ops.calibrationFile()).toBe(text);
    expect(withCalibration(DEFAULT_CONFIG, text, 'calibration.json')).toEqual({
      config: { ...DEFAULT_CONFIG, judge: { ...DEFAULT_CONFIG.judge, calibration: { 'remote-1': map } } },
      unlisted: ['remote-1'],
    });

    const { file } = await calibrateJudges(DEFAULT_CONFIG, setText, 'labels.jsonl', { deps: {}, method: 'affine' });
    expect(await second.ops.loadCalibrationFile(file, 'calibration.json')).toEqual(['rule']);
    expect(Object.keys((await readJudgeSwitches(second.store)).calibration ?? {})).toEqual(['remote-1', 'rule']);
    await expect(
      second.ops.loadCalibrationFile(
        '{"version": 1, "maps": {"rule": {"kind": "isotonic", "x": [0.5, 0.1], "y": [0, 1]}}}',
        'odd.json',
      ),
    ).rejects.toThrow(/^odd\.json: Calibration file: "maps" the map for judge "rule" is not a valid/);
    first.store.db.close();
    second.store.db.close();
  });

  it("a run's group step calibrates every judge's vote from its raw score, once, and never the environment's", async () => {
    const calibration = { rule: { kind: 'affine' as const, a: 0.5, b: 0 } };
    const step = createGroupStep({ ...DEFAULT_CONFIG.judge, verifier_gate: false, calibration });
    const group = [makeTrajectory({ votes: [vote('rule', 0.8), vote('env:arith_tool', 1)] })];
    const [once] = await step.judge(makeTask(), group);
    expect(once.votes.map((v) => [v.judge_id, v.score, v.raw_score])).toEqual([
      ['rule', applyCalibration(calibration.rule, 0.8), 0.8],
      ['env:arith_tool', 1, 1],
    ]);
    expect(once.judge_score).toBeCloseTo(0.4, 12);
    const [twice] = await step.judge(makeTask(), [once]);
    expect(twice.votes).toEqual(once.votes);
  });

  it('the config refuses a calibration map that is not one, with the same words as a calibration file', () => {
    const { errors } = validateRunConfig({ judge: { calibration: { rule: { kind: 'isotonic', x: [0.2], y: [] } } } });
    expect(errors).toEqual([
      {
        path: 'judge.calibration',
        message: expect.stringMatching(
          /^"judge\.calibration" the map for judge "rule" is not a valid identity, affine .* or isotonic/,
        ),
      },
    ]);
    expect(validateRunConfig({ judge: { calibration: [] } }).errors[0].message).toMatch(
      /"judge\.calibration" must map judge ids to calibration maps/,
    );
  });
});
