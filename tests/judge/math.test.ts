import { describe, expect, it } from 'vitest';
import { trimmedMean, TrajectoryJudge } from '../../src/judge/ensemble.ts';
import {
  applyCalibration,
  fitAffine,
  fitIsotonic,
  parseCalibration,
  serializeCalibration,
} from '../../src/judge/calibration-map.ts';
import { krippendorffAlphaInterval, meanAbsoluteError, ranks, spearman } from '../../src/judge/agreement.ts';
import { calibrate, calibrateFromVotes } from '../../src/judge/calibrate.ts';
import { readCalibrationSet } from '../../src/judge/calibration-set.ts';
import type { Judge } from '../../src/judge/types.ts';
import { makeTask, makeTrajectory } from './fixtures.ts';

const fixed = (id: string, score: number | null): Judge => ({
  id,
  score: async () => ({ score, rationale: `fixed ${score}` }),
});

describe('trimmed mean', () => {
  it('drops the highest and lowest only when there are more than two values', () => {
    expect(trimmedMean([0.2, 0.9, 0.5, 0.6])).toBeCloseTo(0.55, 12);
    expect(trimmedMean([0.9, 0.1, 0.4])).toBeCloseTo(0.4, 12);
    expect(trimmedMean([0.3, 0.7])).toBeCloseTo(0.5, 12);
    expect(trimmedMean([1])).toBe(1);
    expect(trimmedMean([])).toBeNull();
  });

  it('excludes null votes and returns null below minVotes', async () => {
    const judges = [fixed('a', 0.2), fixed('b', null), fixed('c', 0.8), fixed('d', 0.6), fixed('e', 1)];
    const j = await new TrajectoryJudge({ judges }).judge(makeTrajectory(), makeTask());
    expect(j.score).toBeCloseTo((0.6 + 0.8) / 2, 12);
    expect(j.votes.map((v) => v.judge_id)).toEqual(['a', 'b', 'c', 'd', 'e']);
    const few = await new TrajectoryJudge({ judges: [fixed('a', 0.4), fixed('b', null)], minVotes: 2 }).judge(
      makeTrajectory(),
      makeTask(),
    );
    expect(few.score).toBeNull();
    expect(few.note).toContain('1 usable vote of 2; 2 needed');
  });

  it('applies calibration maps and keeps the raw score on the vote', async () => {
    const ensemble = new TrajectoryJudge({
      judges: [fixed('a', 0.35), fixed('b', 0.5)],
      calibration: { a: { kind: 'affine', a: 2, b: 0 } },
    });
    const judged = await ensemble.scoreTrajectory(makeTrajectory(), makeTask());
    expect(judged.votes[0]).toMatchObject({ judge_id: 'a', score: 0.7, raw_score: 0.35 });
    expect(judged.votes[1]).toMatchObject({ judge_id: 'b', score: 0.5, raw_score: 0.5 });
    expect(judged.judge_score).toBeCloseTo(0.6, 12);
  });

  it('refuses duplicate judge ids', () => {
    expect(() => new TrajectoryJudge({ judges: [fixed('a', 1), fixed('a', 0)] })).toThrow(/"a" appears twice/);
  });
});

describe('calibration maps', () => {
  const pairs = [
    { raw: 0.1, gold: 0.2 },
    { raw: 0.2, gold: 0.6 },
    { raw: 0.3, gold: 0.4 },
    { raw: 0.4, gold: 0.8 },
  ];

  it('isotonic regression pools adjacent violators', () => {
    const map = fitIsotonic(pairs);
    expect(map).toEqual({ kind: 'isotonic', x: [0.1, 0.2, 0.3, 0.4], y: [0.2, 0.5, 0.5, 0.8] });
    expect(applyCalibration(map, 0.35)).toBeCloseTo(0.65, 12);
    expect(applyCalibration(map, 0.05)).toBe(0.2);
    expect(applyCalibration(map, 0.9)).toBe(0.8);
  });

  it('pools tied raw scores before fitting', () => {
    const map = fitIsotonic([
      { raw: 0.5, gold: 0 },
      { raw: 0.5, gold: 1 },
      { raw: 0.9, gold: 1 },
    ]);
    expect(map).toEqual({ kind: 'isotonic', x: [0.5, 0.9], y: [0.5, 1] });
  });

  it('affine least squares, clamped to [0, 1]', () => {
    const map = fitAffine([
      { raw: 0, gold: 0.1 },
      { raw: 0.5, gold: 0.4 },
      { raw: 1, gold: 0.7 },
    ]);
    expect(map.kind).toBe('affine');
    if (map.kind !== 'affine') return;
    expect(map.a).toBeCloseTo(0.6, 12);
    expect(map.b).toBeCloseTo(0.1, 12);
    expect(applyCalibration(map, 2)).toBe(1);
  });

  it('round-trips through JSON and rejects broken files', () => {
    const file = { version: 1 as const, method: 'isotonic' as const, maps: { j: fitIsotonic(pairs) } };
    expect(parseCalibration(serializeCalibration(file))).toEqual(file);
    expect(() => parseCalibration('{"version":1,"maps":{"j":{"kind":"isotonic","x":[0.5,0.1],"y":[0,1]}}}')).toThrow(
      /judge "j"/,
    );
    expect(() => parseCalibration('{"version":2,"maps":{}}')).toThrow(/version 2/);
  });
});

describe('agreement statistics', () => {
  it('Spearman with average ranks for ties', () => {
    expect(ranks([10, 20, 20, 5])).toEqual([2, 3.5, 3.5, 1]);
    expect(spearman([1, 2, 3, 4], [1, 3, 2, 4])).toBeCloseTo(0.8, 12);
    expect(spearman([1, 1, 1], [1, 2, 3])).toBeNull();
  });

  it("Krippendorff's alpha (interval) with a missing rating", () => {
    // Pairable values 1,2,3,3: D_o = (1/4)·2 = 0.5, D_e = 22/12, alpha = 1 − 0.5·12/22 = 8/11.
    expect(
      krippendorffAlphaInterval([
        [1, 2],
        [3, 3],
        [2, null],
      ]),
    ).toBeCloseTo(8 / 11, 12);
    expect(
      krippendorffAlphaInterval([
        [0.5, 0.5],
        [0.2, 0.2],
      ]),
    ).toBeCloseTo(1, 12);
    expect(krippendorffAlphaInterval([[1, null]])).toBeNull();
  });

  it('MAE', () => {
    expect(meanAbsoluteError([0.1, 0.5], [0.2, 0.2])).toBeCloseTo(0.2, 12);
  });
});

describe('calibration report', () => {
  it('fits per-judge maps and reports MAE before and after', () => {
    const gold = [0.2, 0.6, 0.4, 0.8];
    const raw = [0.1, 0.2, 0.3, 0.4];
    const rows = gold.map((g, i) => ({ gold: g, votes: { j: raw[i], k: i === 0 ? null : g } }));
    const report = calibrateFromVotes(['j', 'k'], rows, 'isotonic');
    const j = report.judges[0];
    expect(j.n).toBe(4);
    expect(j.spearman).toBeCloseTo(0.8, 12);
    expect(j.mae_before).toBeCloseTo(0.25, 12);
    expect(j.mae_after).toBeCloseTo(0.05, 12);
    expect(report.judges[1].n).toBe(3);
    expect(report.file.maps.j).toEqual({ kind: 'isotonic', x: [0.1, 0.2, 0.3, 0.4], y: [0.2, 0.5, 0.5, 0.8] });
    expect(report.ensemble.n).toBe(4);
    expect(report.alpha_after).not.toBeNull();
    expect(report.alpha_after as number).toBeGreaterThan(report.alpha_before as number);
  });

  it('runs judges over a JSONL set and names bad lines', async () => {
    const lines = [0.1, 0.9].map((gold, i) =>
      JSON.stringify({
        trajectory: makeTrajectory({ id: `c${i}`, final_response: gold > 0.5 ? 'good' : 'bad' }),
        gold,
      }),
    );
    const { items, problems } = readCalibrationSet(`${lines.join('\n')}\n\n`);
    expect([items.length, problems]).toEqual([2, []]);
    const echo: Judge = {
      id: 'echo',
      score: async (t) => ({ score: t.final_response === 'good' ? 0.7 : 0.3, rationale: '' }),
    };
    const { report, votes } = await calibrate(
      [
        echo,
        {
          id: 'broken',
          score: async () => {
            throw new Error('x');
          },
        },
      ],
      items,
      { method: 'affine' },
    );
    expect(votes[0].map((v) => v.judge_id)).toEqual(['echo', 'broken']);
    expect(report.judges[0].mae_before).toBeCloseTo(0.2, 12);
    expect(report.judges[0].mae_after).toBeCloseTo(0, 12);
    expect(report.judges[1].n).toBe(0);
    // Every bad line is named by its line in the file, and the good ones kept (the app lists them all; the CLI refuses the set).
    const bad = readCalibrationSet(
      `{"trajectory": {"steps": []}, "gold": 2}\n\n{oops\n${lines[0]}\n{"gold": 1}\n{"gold": 1, "trajectory": {"steps": []}}`,
    );
    expect(bad.items).toHaveLength(1);
    expect(bad.problems.map((p) => p.line)).toEqual([1, 3, 5, 6]);
    expect(bad.problems[0].message).toMatch(/^"gold" must be a number in \[0, 1\], got 2/);
    expect(bad.problems[1].message).toMatch(/^not valid JSON/);
    expect(bad.problems[2].message).toMatch(/"trajectory" is missing/);
    expect(bad.problems[3].message).toMatch(/needs "messages" and "steps"/);
  });
});

describe('judges from the run config', () => {
  it('builds each judge type and names a missing key', async () => {
    const { createJudges } = await import('../../src/judge/from-config.ts');
    const remote = {
      type: 'remote' as const,
      id: 'r',
      base_url: 'http://127.0.0.1:1/v1',
      model: 'm',
      api_key_env: 'JUDGE_KEY',
      temperature: 0,
      timeout_ms: 1000,
      max_concurrency: 1,
      max_retries: 0,
    };
    const judges = await createJudges(
      [{ type: 'rule', id: 'rule' }, remote, { type: 'model', id: 'm', path: 'models/judge' }],
      {
        getSecret: (name) => (name === 'JUDGE_KEY' ? 'k' : null),
        loadModelJudge: async (id) => fixed(id, 0.5),
      },
    );
    expect(judges.map((j) => j.id)).toEqual(['rule', 'r', 'm']);
    await expect(createJudges([remote], { getSecret: () => null })).rejects.toThrow(
      /no API key found under "JUDGE_KEY"/,
    );
    await expect(createJudges([{ type: 'self', id: 's' }])).rejects.toThrow(/needs the policy/);
  });
});
