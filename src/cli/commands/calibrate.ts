/**
 * `spindle calibrate --set labelled.jsonl`: the config's judges score a labelled set, a monotone map is
 * fitted per judge, the agreement with the labels is printed before and after, and the maps are saved
 * (`calibration.json`). `spindle train|collect --calibration calibration.json` loads them into the run
 * (`judge.calibration`), as the Judges screen's saved calibration reaches the app's runs.
 */
import { CliError, type Command, type CommandContext, type OptionSpec } from '../command.ts';
import type { RunConfig } from '../../config/schema.ts';
import { calibrateJudges, withCalibration } from '../../pipeline/operations/calibration.ts';
import { Progress } from './progress.ts';
import {
  choiceOption,
  configOrDefault,
  formatScore,
  noPositionals,
  readText,
  requireOption,
  stringOption,
  writeOutput,
  type Values,
} from './shared.ts';

export const calibrationOption: OptionSpec = {
  type: 'string',
  placeholder: 'file',
  description:
    "a saved calibration (from `spindle calibrate` or the Judges screen): each judge's votes go through its map (judge.calibration)",
};

/** The config with `--calibration FILE`'s maps in it, saying which judges they are for; the config as it is without the flag. */
export function applyCalibrationOption(ctx: CommandContext, values: Values, config: RunConfig): RunConfig {
  const path = stringOption(values, 'calibration');
  if (!path) return config;
  let loaded: ReturnType<typeof withCalibration>;
  try {
    loaded = withCalibration(config, readText(ctx, path, 'calibration file'), path);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const ids = Object.keys(loaded.config.judge.calibration);
  ctx.err(`calibration from ${path}: ${ids.join(', ') || 'no judges'}`);
  if (loaded.unlisted.length)
    ctx.err(
      `warning: ${path} calibrates ${loaded.unlisted.join(', ')}, which the config's judge.judges does not list; those maps do nothing`,
    );
  return loaded.config;
}

export const calibrateCommand: Command = {
  name: 'calibrate',
  summary: "Score a labelled set with the config's judges, fit a map per judge, print the agreement and save the maps.",
  options: {
    set: {
      type: 'string',
      description: 'the labelled set: JSONL of {"trajectory": {…}, "gold": 0.8}, gold in [0, 1]',
      placeholder: 'file.jsonl',
    },
    config: {
      type: 'string',
      description: 'the run config whose judges are calibrated (judge.judges); default: built-in defaults',
      placeholder: 'file',
    },
    method: {
      type: 'string',
      default: 'isotonic',
      description: 'isotonic (monotone steps) or affine (a line)',
      placeholder: 'kind',
    },
    output: {
      type: 'string',
      default: 'calibration.json',
      description: 'where the maps are saved (train and collect take it as --calibration)',
      placeholder: 'file',
    },
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'calibrate');
    const setPath = requireOption(values, 'set', '--set labelled.jsonl');
    const config = configOrDefault(ctx, stringOption(values, 'config'));
    const method = choiceOption(values, 'method', ['isotonic', 'affine'] as const, 'isotonic');
    // onnxruntime loads only when the config has a model judge.
    const loadModelJudge = async (id: string, path: string) =>
      (await import('../../pipeline/platform/node-judges.ts')).loadNodeModelJudge(id, path, ctx.cwd);
    const progress = new Progress(ctx, 'calibrate: items', 0, 10);
    let result: Awaited<ReturnType<typeof calibrateJudges>>;
    try {
      result = await calibrateJudges(config, readText(ctx, setPath, 'labelled set'), setPath, {
        deps: { getSecret: (name) => process.env[name] ?? null, loadModelJudge },
        method,
        onItem: (done, total) => progress.update(done, '', total),
      });
    } catch (e) {
      throw new CliError((e as Error).message);
    } finally {
      progress.finish();
    }
    const { report } = result;
    ctx.out(`${report.items} labelled items, ${method} maps`);
    for (const j of report.judges) {
      ctx.out(
        `  ${j.judge_id}: ${j.n} scored, Spearman ${formatScore(j.spearman)}, MAE ${formatScore(j.mae_before)} → ${formatScore(j.mae_after)} (in-sample)`,
      );
    }
    const e = report.ensemble;
    ctx.out(
      `  ensemble: Spearman ${formatScore(e.spearman_before)} → ${formatScore(e.spearman_after)}, MAE ${formatScore(e.mae_before)} → ${formatScore(e.mae_after)}; judges' alpha ${formatScore(report.alpha_before)} → ${formatScore(report.alpha_after)}`,
    );
    const file = writeOutput(ctx, stringOption(values, 'output') ?? 'calibration.json', result.file);
    ctx.out(
      `wrote ${file}; use it with: spindle train --calibration ${stringOption(values, 'output') ?? 'calibration.json'}`,
    );
  },
};
