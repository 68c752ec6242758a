/** Each command on a fresh nano model with tiny budgets: exit codes, files, and one-line errors. */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { parquetToTrajectories } from '../../src/export/parquet.ts';
import { readAdapter } from '../../src/export/peft.ts';
import { cli, cliWithSignal, nanoModelDir, tempDir, tinyConfig, writeConfig } from './helpers.ts';

let model: string;
let dir: string;

beforeAll(async () => {
  model = await nanoModelDir();
  dir = tempDir();
  writeConfig(dir, tinyConfig());
  const sampled = await cli(dir, 'collect', '--config', 'run.yaml', '--groups', '1', '--model', model);
  expect(sampled).toMatchObject({ code: 0 });
  expect(sampled.out).toMatch(/: 2 trajectories in 1 groups \(2 scored\)/);
  const expert = await cli(
    dir,
    'collect',
    '--config',
    'run.yaml',
    '--groups',
    '3',
    '--policy',
    'expert',
    '--group-size',
    '2',
  );
  expect(expert.out).toMatch(/6 trajectories in 3 groups[\s\S]*success 100\.0%/);
}, 60_000);

const oneLine = (r: { code: number; err: string }) => {
  expect(r.code).not.toBe(0);
  expect(r.err.split('\n')).toHaveLength(1);
  expect(r.err).toMatch(/^spindle: /);
};

describe('spindle envs', () => {
  it('lists every environment with tags, levels and tools, or those with a tag', async () => {
    const all = await cli(dir, 'envs');
    expect(all.code).toBe(0);
    expect(all.out.split('\n')[0]).toMatch(/^name\s+tags\s+levels\s+tools\s+from$/);
    expect(all.out).toMatch(/arith_tool\s+math,tool-use,starter\s+1-5\s+calc\s+built-in/);
    // A built-in with tools of its own lists them beside the sandbox's (clarify_task has only its own).
    expect(all.out).toMatch(/clarify_task\s+\S+\s+1-5\s+ask,book\s+built-in/);
    const shell = await cli(dir, 'envs', '--tag', 'shell');
    expect(
      shell.out
        .split('\n')
        .slice(1)
        .map((l) => l.split(' ')[0]),
    ).toEqual(['file_chain', 'git_repo', 'long_plan', 'order_total', 'repo_fix', 'shell_exec']);
    const none = await cli(dir, 'envs', '--tag', 'nope');
    oneLine(none);
    expect(none.err).toContain('Tags: ');
  });
});

describe('spindle collect → export', () => {
  it('collect stored the runs in .spindle/', () => {
    expect(existsSync(join(dir, '.spindle', 'spindle.db'))).toBe(true);
  });

  it('exports Parquet, chat JSONL (filtered) and Atropos groups', async () => {
    expect((await cli(dir, 'export', 'trajectories', '--format', 'parquet', '--output', 'out')).out).toMatch(
      /wrote 8 trajectories/,
    );
    const rows = await parquetToTrajectories(readFileSync(join(dir, 'out', 'trajectories.parquet')), 'x.parquet');
    expect(rows).toHaveLength(8);
    expect(rows.filter((t) => t.success)).toHaveLength(6);

    expect(
      (await cli(dir, 'export', 'trajectories', '--format', 'jsonl', '--output', 'out', '--min-score', '1')).code,
    ).toBe(0);
    const lines = readFileSync(join(dir, 'out', 'trajectories.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { score: number; messages: unknown[] });
    expect(lines).toHaveLength(6);
    expect(lines.every((l) => l.score === 1 && l.messages.length > 2)).toBe(true);

    expect((await cli(dir, 'export', 'trajectories', '--format', 'atropos', '--output', 'out')).out).toMatch(
      /wrote 4 scored groups/,
    );
    const group = JSON.parse(readFileSync(join(dir, 'out', 'scored_groups.jsonl'), 'utf8').split('\n')[0]) as Record<
      string,
      unknown
    >;
    expect(Object.keys(group)).toEqual(expect.arrayContaining(['tokens', 'masks', 'scores']));
  });

  it('export errors: bad format, empty filter, no store, no checkpoint', async () => {
    const bad = await cli(dir, 'export', 'trajectories', '--format', 'csv', '--output', 'out');
    oneLine(bad);
    expect(bad.code).toBe(2);
    oneLine(await cli(dir, 'export', 'trajectories', '--format', 'jsonl', '--output', 'out', '--env', 'git_repo'));
    const noStore = await cli(tempDir(), 'export', 'trajectories', '--format', 'jsonl', '--output', 'out');
    oneLine(noStore);
    expect(noStore.err).toMatch(/no Spindle store/);
    const noCkpt = await cli(dir, 'export', 'adapter', '--output', 'a.zip');
    oneLine(noCkpt);
    expect(noCkpt.err).toMatch(/no run with a checkpoint/);
  });
});

describe('a model by hub id or URL', () => {
  it('eval downloads hf:<id> from HF_ENDPOINT into the disk cache, then reads the cache; an https folder URL works too', async () => {
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(req.url!);
      const m = /^\/test-org\/nano\/resolve\/main\/([\w.]+)$/.exec(req.url!);
      if (!m || !existsSync(join(model, m[1]))) return void res.writeHead(404).end();
      const bytes = readFileSync(join(model, m[1]));
      res.writeHead(200, { 'content-length': bytes.length }).end(bytes);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const saved = { HF_ENDPOINT: process.env.HF_ENDPOINT, SPINDLE_CACHE: process.env.SPINDLE_CACHE };
    process.env.HF_ENDPOINT = endpoint;
    process.env.SPINDLE_CACHE = join(tempDir(), 'cache');
    try {
      const args = ['eval', '--env', 'arith_tool', '--items', '1', '--max-new-tokens', '8', '--max-steps', '1'];
      const first = await cli(dir, ...args, '--model', 'hf:test-org/nano');
      expect(first.code, first.err).toBe(0);
      expect(first.out).toMatch(/download model\.safetensors: 100% of [\d.]+ MB/);
      expect(first.out).toMatch(/\| arith_tool \| 1 \| test \| \d\/1 = /);
      const fetched = requests.length;
      const again = await cli(dir, ...args, '--model', 'hf:test-org/nano');
      expect(again.code).toBe(0);
      expect(requests.length).toBe(fetched); // every file came from the cache
      expect(again.out).toMatch(/\| arith_tool \| 1 \| test \| \d\/1 = /);
      const byUrl = await cli(dir, ...args, '--model', `${endpoint}/test-org/nano/resolve/main`);
      expect(byUrl.code, byUrl.err).toBe(0);
      const missing = await cli(dir, ...args, '--model', 'hf:test-org/absent');
      oneLine(missing);
      expect(missing.err).toMatch(/cannot load the model from hf:test-org\/absent/);
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      server.close();
    }
  }, 60_000);
});

describe('spindle sft → eval', () => {
  it('trains LoRA on exported Parquet and writes a PEFT adapter that eval applies', async () => {
    const r = await cli(
      dir,
      'sft',
      '--data',
      'out/trajectories.parquet',
      '--min-score',
      '1',
      '--epochs',
      '2',
      '--model',
      model,
      '--output',
      'sft',
      '--config',
      'run.yaml',
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/sft: left out 2 rows scoring below 1\nsft: 6 examples from 1 file\(s\), 2 epochs, LoRA r=4/);
    expect(r.out).toMatch(/sft: 12 updates, loss \d/);
    // By default SFT trains on the successes alone; --min-score 0 takes every row.
    const successes = await cli(
      dir,
      'sft',
      '--data',
      'out/trajectories.parquet',
      '--epochs',
      '1',
      '--model',
      model,
      '--output',
      'sft-default',
      '--config',
      'run.yaml',
    );
    expect(successes.out).toMatch(
      /sft: left out 2 rows that did not succeed \(--min-score 0 keeps every row\)\nsft: 6 examples from 1 file/,
    );
    expect(
      (
        await cli(
          dir,
          'sft',
          '--data',
          'out/trajectories.parquet',
          '--epochs',
          '1',
          '--min-score',
          '0',
          '--model',
          model,
          '--output',
          'sft-all',
          '--config',
          'run.yaml',
        )
      ).out,
    ).toMatch(/^sft: 8 examples from 1 file/);
    const adapter = readAdapter(readFileSync(join(dir, 'sft', 'adapter.zip')), 'adapter.zip');
    expect(adapter.config).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 8 });

    const e = await cli(
      dir,
      'eval',
      '--env',
      'arith_tool',
      '--items',
      '2',
      '--model',
      model,
      '--adapter',
      'sft/adapter.zip',
      '--max-new-tokens',
      '16',
      '--max-steps',
      '1',
      '--output',
      'eval.json',
    );
    expect(e.code).toBe(0);
    expect(e.out).toMatch(/\| arith_tool \| 1 \| test \| \d\/2 = \d+% \[\d+, \d+\] \| \d+\.\d% \|/);
    const json = JSON.parse(readFileSync(join(dir, 'eval.json'), 'utf8')) as {
      results: { n: number; split: string }[];
    };
    expect(json.results).toEqual([expect.objectContaining({ n: 2, split: 'test' })]);
  }, 60_000);

  it('trains on instruction JSONL and writes the merged model, which loads as --model', async () => {
    writeFileSync(
      join(dir, 'instr.jsonl'),
      ['{"instruction":"Add 2 and 3","output":"5"}', '{"prompt":"Say hi","completion":"hi"}', ''].join('\n'),
    );
    const r = await cli(
      dir,
      'sft',
      '--data',
      'instr.jsonl',
      '--epochs',
      '1',
      '--model',
      model,
      '--output',
      'merged',
      '--merge',
    );
    expect(r.code).toBe(0);
    expect(readdirSync(join(dir, 'merged')).sort()).toEqual([
      'README.md',
      'adapter.zip',
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const e = await cli(
      dir,
      'eval',
      '--env',
      'text_reverse',
      '--items',
      '1',
      '--model',
      'merged',
      '--max-new-tokens',
      '8',
      '--max-steps',
      '1',
    );
    expect(e.out).toMatch(/\| text_reverse \| 1 \| test \| \d\/1 = /);
  }, 60_000);

  it('Ctrl-C during sft stops after the current update and still writes the adapter', async () => {
    const controller = new AbortController();
    const out: string[] = [];
    const code = await main(
      ['sft', '--data', 'out/trajectories.jsonl', '--epochs', '3', '--model', model, '--output', 'stopped'],
      {
        cwd: dir,
        out: (l) => out.push(l),
        interactive: false,
        signal: controller.signal,
        err: (l) => {
          if (l.startsWith('sft: updates')) controller.abort();
        },
      },
    );
    expect(code).toBe(0);
    expect(out.join('\n')).toMatch(/interrupted after 1 updates; saved what was trained/);
    expect(existsSync(join(dir, 'stopped', 'adapter.zip'))).toBe(true);
    const early = await cliWithSignal(
      AbortSignal.abort(),
      dir,
      'sft',
      '--data',
      'instr.jsonl',
      '--model',
      model,
      '--output',
      'never',
    );
    expect(early.code).toBe(130);
    expect(existsSync(join(dir, 'never', 'adapter.zip'))).toBe(false);
  }, 60_000);

  it('errors: missing data, unknown environment, bad number, bad config, bad adapter — one line; --verbose adds the stack', async () => {
    const missing = await cli(dir, 'sft', '--data', 'nope.parquet', '--model', model);
    oneLine(missing);
    expect(missing.err).toMatch(/nope\.parquet does not exist/);
    const env = await cli(dir, 'eval', '--env', 'nope', '--model', model);
    oneLine(env);
    expect(env.err).toMatch(/Unknown environment "nope"/);
    const items = await cli(dir, 'eval', '--env', 'arith_tool', '--items', 'many');
    oneLine(items);
    expect(items.code).toBe(2);
    writeFileSync(join(dir, 'bad.yaml'), 'training:\n  max_steps: -3\ntasks:\n  environments: [nowhere]\n');
    const bad = await cli(dir, 'collect', '--config', 'bad.yaml');
    oneLine(bad);
    expect(bad.err).toMatch(/bad\.yaml:\d+: .*max_steps/);
    // Environment names are checked once the user's own (files, the store) are known.
    writeFileSync(join(dir, 'bad.yaml'), 'tasks:\n  environments: [nowhere]\n');
    const unknown = await cli(dir, 'collect', '--config', 'bad.yaml');
    oneLine(unknown);
    expect(unknown.err).toMatch(
      /Unknown environment "nowhere". Known: .*arith_tool.*Add your own with `spindle envs add FILE`/,
    );
    const noModel = await cli(dir, 'eval', '--env', 'arith_tool', '--model', 'out');
    oneLine(noModel);
    expect(noModel.err).toMatch(/not a model folder/);
    const adapter = await cli(
      dir,
      'eval',
      '--env',
      'arith_tool',
      '--model',
      model,
      '--adapter',
      'out/trajectories.parquet',
    );
    oneLine(adapter);
    const verbose = await cli(dir, 'sft', '--data', 'nope.parquet', '--verbose');
    expect(verbose.err.split('\n').length).toBeGreaterThan(1);
  }, 60_000);
});

describe('spindle skills', () => {
  it('from-trajectories writes a skill per task type; to-instructions turns their examples into agent-format rows', async () => {
    const made = await cli(dir, 'skills', 'from-trajectories', '--output', 'skills');
    expect(made.code).toBe(0);
    const files = readdirSync(join(dir, 'skills'));
    expect(files.length).toBeGreaterThan(0);
    expect(files.every((f) => /^arith-tool-level-\d\.md$/.test(f))).toBe(true);
    const doc = readFileSync(join(dir, 'skills', files[0]), 'utf8');
    expect(doc).toMatch(
      /^---\nname: arith-tool-level-\d\n[\s\S]*usage_count: \d+\n[\s\S]*## Procedure[\s\S]*## Examples/,
    );
    const rows = await cli(
      dir,
      'skills',
      'to-instructions',
      '--skills',
      'skills',
      '--min-usage',
      '1',
      '--output',
      'skills.jsonl',
    );
    expect(rows.out).toMatch(/wrote 6 instruction rows from \d+ of \d+ skills/); // the six expert successes
    const row = JSON.parse(readFileSync(join(dir, 'skills.jsonl'), 'utf8').split('\n')[0]) as {
      messages: { role: string; content: string }[];
      tools: unknown[];
    };
    expect(row.messages[0].role).toBe('system');
    expect(row.messages[0].content).toContain('<tools>');
    expect(row.messages.some((m) => m.role === 'assistant' && m.content.includes('<tool_call>'))).toBe(true);
    oneLine(
      await cli(dir, 'skills', 'to-instructions', '--skills', 'skills', '--min-usage', '99', '--output', 'x.jsonl'),
    );
  });
});
