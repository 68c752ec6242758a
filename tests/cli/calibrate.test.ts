/**
 * `spindle calibrate` saves a calibration and `--calibration` loads it again: the labelled set scored by
 * the config's judges, the maps written, and a collection run whose votes go through them (each keeping
 * its raw score).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parquetToTrajectories } from '../../src/export/parquet.ts';
import { makeTrajectory } from '../store/fixtures.ts';
import { cli, tempDir, tinyConfig, writeConfig } from './helpers.ts';

let dir: string;

beforeAll(() => {
  dir = tempDir();
  writeConfig(dir, tinyConfig());
  const labelled = [0.2, 0.4].map((gold) => JSON.stringify({ trajectory: makeTrajectory(), gold }));
  writeFileSync(join(dir, 'labels.jsonl'), `${labelled.join('\n')}\n`);
  writeFileSync(join(dir, 'bad.jsonl'), `${labelled[0]}\n\n{"gold": 3}\n`);
});

describe('spindle calibrate', () => {
  it('fits a map per judge, prints the agreement and saves the maps', async () => {
    const r = await cli(dir, 'calibrate', '--set', 'labels.jsonl', '--config', 'run.yaml', '--method', 'affine');
    expect(r).toMatchObject({ code: 0 });
    expect(r.out).toMatch(/^2 labelled items, affine maps/);
    expect(r.out).toMatch(/ {2}rule: 2 scored, Spearman .*, MAE .* → .* \(in-sample\)/);
    const saved = JSON.parse(readFileSync(join(dir, 'calibration.json'), 'utf8'));
    // Both items pass the same format checks: one raw score, so the line is flat at the mean label.
    expect(saved).toEqual({
      version: 1,
      method: 'affine',
      maps: { rule: { kind: 'affine', a: 0, b: expect.closeTo(0.3, 12) } },
    });
  });

  it('calibrates the shipped model judge too, loaded from its folder', async () => {
    writeConfig(
      dir,
      tinyConfig((c) => {
        c.judge.judges = [
          { type: 'rule', id: 'rule' },
          { type: 'model', id: 'onnx-judge', path: 'models/judge' },
        ];
      }),
      'two.yaml',
    );
    const r = await cli(dir, 'calibrate', '--set', 'labels.jsonl', '--config', 'two.yaml', '--output', 'two.json');
    expect(r).toMatchObject({ code: 0 });
    expect(r.out).toMatch(/ {2}onnx-judge: 2 scored, /);
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'two.json'), 'utf8')).maps)).toEqual(['rule', 'onnx-judge']);
  });

  it('refuses a set with bad lines, naming each line of the file', async () => {
    const r = await cli(dir, 'calibrate', '--set', 'bad.jsonl', '--output', 'never.json');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^spindle: bad\.jsonl: line 3: "gold" must be a number in \[0, 1\], got 3\. Fix those lines and run again\.$/,
    );
  });

  it("a run loads the saved maps: each judge's vote calibrated, its raw score kept", async () => {
    const r = await cli(
      dir,
      'collect',
      '--config',
      'run.yaml',
      '--groups',
      '1',
      '--policy',
      'expert',
      '--group-size',
      '2',
      '--calibration',
      'calibration.json',
    );
    expect(r).toMatchObject({ code: 0 });
    expect(r.err).toContain('calibration from calibration.json: rule');
    expect((await cli(dir, 'export', 'trajectories', '--format', 'parquet', '--output', 'out')).code).toBe(0);
    const stored = await parquetToTrajectories(
      new Uint8Array(readFileSync(join(dir, 'out', 'trajectories.parquet'))),
      'trajectories.parquet',
    );
    expect(stored.length).toBe(2);
    for (const t of stored) {
      const rule = t.votes.find((v) => v.judge_id === 'rule')!;
      expect(rule.score).toBeCloseTo(0.3, 12);
      expect(rule.raw_score).not.toBeCloseTo(0.3, 6);
      // The environment's verdict is never calibrated.
      const env = t.votes.find((v) => v.judge_id.startsWith('env:'))!;
      expect(env.raw_score ?? env.score).toBe(env.score);
    }
    const bad = await cli(
      dir,
      'collect',
      '--config',
      'run.yaml',
      '--groups',
      '1',
      '--policy',
      'expert',
      '--calibration',
      'labels.jsonl',
    );
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/^spindle: labels\.jsonl: Calibration file: /);
  });
});
