/**
 * The four fine-tuning workflows end to end through the CLI, on a fresh nano model with tiny
 * budgets: the artifacts exist and the evaluation ran. (docs/workflows.md shows them at full size.)
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { parseRunConfigYaml } from '../../src/config/yaml.ts';
import { readAdapter } from '../../src/export/peft.ts';
import { readSafetensors } from '../../src/hub/safetensors.ts';
import { openFileStore } from '../../src/store/file-store.ts';
import { getRun, loadLatestCheckpoint } from '../../src/store/index.ts';
import { cli, nanoModelDir, tempDir, tinyConfig, writeConfig } from './helpers.ts';

let model: string;

beforeAll(async () => {
  model = await nanoModelDir(2);
}, 30_000);

function evalRows(dir: string, file: string): { env: string; n: number; split: string }[] {
  return (JSON.parse(readFileSync(join(dir, file), 'utf8')) as { results: { env: string; n: number; split: string }[] })
    .results;
}

describe('the four workflows', () => {
  it('(1) collect → export Parquet → SFT 3 epochs → eval on the test split', async () => {
    const dir = tempDir();
    writeConfig(
      dir,
      tinyConfig((c) => {
        c.training.batch_size = 4;
      }),
    );
    expect((await cli(dir, 'collect', '--config', 'run.yaml', '--groups', '2', '--model', model)).out).toMatch(
      /4 trajectories in 2 groups/,
    );
    expect((await cli(dir, 'export', 'trajectories', '--format', 'parquet', '--output', 'data')).code).toBe(0);
    // A random nano model succeeds at nothing: SFT's default (the successes) would have no rows, so every row is taken.
    const sft = await cli(
      dir,
      'sft',
      '--data',
      'data',
      '--epochs',
      '3',
      '--min-score',
      '0',
      '--model',
      model,
      '--config',
      'run.yaml',
      '--output',
      'sft',
    );
    expect(sft.out).toMatch(/4 examples from 1 file\(s\), 3 epochs[\s\S]*3 updates/);
    expect(existsSync(join(dir, 'sft', 'adapter.zip'))).toBe(true);
    const e = await cli(
      dir,
      'eval',
      '--env',
      'arith_tool',
      '--split',
      'test',
      '--items',
      '2',
      '--model',
      model,
      '--adapter',
      'sft/adapter.zip',
      '--config',
      'run.yaml',
      '--output',
      'eval.json',
    );
    expect(e.code).toBe(0);
    expect(evalRows(dir, 'eval.json')).toEqual([expect.objectContaining({ env: 'arith_tool', n: 2, split: 'test' })]);
  }, 60_000);

  it('(2) online GRPO with reward_scale 2.5: Ctrl-C checkpoints, --resume finishes, the adapter exports and evaluates', async () => {
    const dir = tempDir();
    writeConfig(
      dir,
      tinyConfig((c) => {
        c.training.max_steps = 2;
        c.training.eval_interval = 2;
      }),
    );
    expect((await cli(dir, 'config', 'set', '--config', 'run.yaml', 'reward_scale', '2.5')).code).toBe(0);

    const controller = new AbortController();
    const out: string[] = [];
    const code = await main(['train', '--config', 'run.yaml', '--model', model], {
      cwd: dir,
      out: (l) => out.push(l),
      interactive: false,
      signal: controller.signal,
      err: (l) => {
        if (l.startsWith('train: steps')) controller.abort();
      },
    });
    expect(code).toBe(0);
    const text = out.join('\n');
    expect(text).toMatch(/stopped at step 1/);
    const runId = /resume with: spindle train --resume (\S+)/.exec(text)![1];

    const resumed = await cli(dir, 'train', '--resume', runId, '--model', model);
    expect(resumed.code).toBe(0);
    expect(resumed.out).toMatch(new RegExp(`run ${runId} \\(.+\\): finished at step 2`));
    expect(resumed.out).toMatch(/eval arith_tool at step 2 \(test\): \d+\/\d+ = \d+% \[\d+, \d+\]/);

    const store = await openFileStore(join(dir, '.spindle'));
    expect((await getRun(store, runId))!.config.training.reward_scale).toBe(2.5);
    // The run names the model it trained (--model), so the adapter and a merge find that base.
    expect((await getRun(store, runId))!.config.model.base_model).toBe(model);
    expect((await loadLatestCheckpoint(store, runId))!.step).toBe(2);
    await store.close();

    expect(
      (await cli(dir, 'export', 'trajectories', '--format', 'atropos', '--run', runId, '--output', 'groups')).code,
    ).toBe(0);
    const groups = readFileSync(join(dir, 'groups', 'scored_groups.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { scores: number[] });
    expect(groups.length).toBeGreaterThanOrEqual(2);
    expect(groups.flatMap((g) => g.scores).every((s) => s >= 0 && s <= 2.5)).toBe(true);

    const exported = await cli(
      dir,
      'export',
      'adapter',
      '--run',
      runId,
      '--output',
      'adapter.zip',
      '--merge',
      'merged',
    );
    expect(exported.code).toBe(0);
    const adapter = readAdapter(readFileSync(join(dir, 'adapter.zip')), 'adapter.zip');
    expect(adapter.config.r).toBe(4);
    expect(adapter.config.base_model_name_or_path).toBe(model);
    // The merged model is the base with (alpha/r)·B·A folded into each adapted projection (the folding
    // itself is checked against PEFT in tests/export), and nothing else changed.
    expect(readdirSync(join(dir, 'merged')).sort()).toEqual([
      'README.md',
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const weights = (folder: string) =>
      readSafetensors(readFileSync(join(folder, 'model.safetensors')), folder).tensors;
    const [base, merged] = [weights(model), weights(join(dir, 'merged'))];
    const scale = adapter.config.lora_alpha / adapter.config.r;
    for (const [name, A] of adapter.tensors) {
      if (!name.endsWith('.lora_A.weight')) continue;
      const B = adapter.tensors.get(name.replace('lora_A', 'lora_B'))!;
      const target = name.replace(/^base_model\.model\./, '').replace('.lora_A.weight', '.weight');
      const [W, M] = [base.get(target)!, merged.get(target)!];
      const [rows, cols, r] = [W.shape[0], W.shape[1], A.shape[0]];
      let worst = 0;
      for (let o = 0; o < rows; o++)
        for (let i = 0; i < cols; i++) {
          let ba = 0;
          for (let k = 0; k < r; k++) ba += B.data[o * r + k] * A.data[k * cols + i];
          worst = Math.max(worst, Math.abs(M.data[o * cols + i] - W.data[o * cols + i] - scale * ba));
        }
      expect(worst, target).toBeLessThan(1e-5);
    }
    expect(Array.from(merged.get('model.embed_tokens.weight')!.data)).toEqual(
      Array.from(base.get('model.embed_tokens.weight')!.data),
    );
    const onMerged = await cli(
      dir,
      'eval',
      '--env',
      'arith_tool',
      '--items',
      '1',
      '--model',
      'merged',
      '--config',
      'run.yaml',
    );
    expect(onMerged.out).toMatch(/\| arith_tool \| 1 \| test \| \d\/1 = /);
    const e = await cli(
      dir,
      'eval',
      '--env',
      'arith_tool',
      '--items',
      '1',
      '--model',
      model,
      '--adapter',
      'adapter.zip',
      '--config',
      'run.yaml',
    );
    expect(e.out).toMatch(/\| arith_tool \| 1 \| test \| \d\/1 = /);
  }, 90_000);

  it('(3) transfer shell_exec → git_repo with frozen layers', async () => {
    const dir = tempDir();
    writeConfig(
      dir,
      tinyConfig((c) => {
        c.tasks.environments = ['shell_exec'];
        c.tasks.difficulty_range = [1, 1];
      }),
      'shell.yaml',
    );
    expect((await cli(dir, 'train', '--config', 'shell.yaml', '--model', model)).code).toBe(0);
    const init = await cli(
      dir,
      'transfer',
      'init',
      '--source-env',
      'shell_exec',
      '--target-env',
      'git_repo',
      '--freeze-layers',
      '0-1',
      '--config',
      'shell.yaml',
      '--output',
      'transfer.yaml',
    );
    expect(init.out).toMatch(/frozen layers 0-1, learning rate 0.002 × 0.3 = 0.0006/);
    const config = parseRunConfigYaml(readFileSync(join(dir, 'transfer.yaml'), 'utf8')).config!;
    expect(config.tasks.environments).toEqual(['git_repo']);
    expect(config.lora.freeze_layers).toBe('0-1');
    expect(config.transfer.source_checkpoint).toMatch(/^run-/);

    const t = await cli(dir, 'transfer', 'train', '--config', 'transfer.yaml', '--model', model);
    expect(t.code).toBe(0);
    expect(t.out).toMatch(/eval git_repo at step 1 \(test\): \d+\/\d+ = /);
    const runId = /run (\S+) \(.+\): finished at step 1/.exec(t.out)![1];
    const store = await openFileStore(join(dir, '.spindle'));
    const ckpt = await loadLatestCheckpoint(store, runId);
    const setup = (ckpt!.meta.checkpoint as { setup: { frozenLayers: number[]; learningRate: number } }).setup;
    expect(setup.frozenLayers).toEqual([0, 1]);
    expect(setup.learningRate).toBeCloseTo(0.0006, 10);
    await store.close();
  }, 90_000);

  it('(4) skills → instructions → SFT', async () => {
    const dir = tempDir();
    writeConfig(
      dir,
      tinyConfig((c) => {
        c.training.batch_size = 4;
      }),
    );
    expect(
      (await cli(dir, 'collect', '--config', 'run.yaml', '--groups', '2', '--policy', 'expert', '--group-size', '5'))
        .out,
    ).toMatch(/success 100\.0%/);
    expect((await cli(dir, 'skills', 'from-trajectories', '--output', 'skills')).code).toBe(0);
    expect(readdirSync(join(dir, 'skills')).length).toBeGreaterThan(0);
    expect(
      (
        await cli(
          dir,
          'skills',
          'to-instructions',
          '--skills',
          'skills',
          '--min-usage',
          '1',
          '--output',
          'instructions.jsonl',
        )
      ).out,
    ).toMatch(/wrote 10 instruction rows/);
    const sft = await cli(
      dir,
      'sft',
      '--data',
      'instructions.jsonl',
      '--epochs',
      '1',
      '--model',
      model,
      '--config',
      'run.yaml',
      '--output',
      'sft',
    );
    expect(sft.out).toMatch(/10 examples/);
    const e = await cli(
      dir,
      'eval',
      '--env',
      'arith_tool',
      '--items',
      '1',
      '--model',
      model,
      '--adapter',
      'sft/adapter.zip',
      '--config',
      'run.yaml',
      '--output',
      'eval.json',
    );
    expect(e.code).toBe(0);
    expect(evalRows(dir, 'eval.json')[0].n).toBe(1);
  }, 60_000);
});
