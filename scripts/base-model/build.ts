/**
 * The base model's whole build, stage by stage (docs/base-model.md), resumable: a stage that finished
 * leaves `<stage>.done` in the build folder and is skipped next time; training resumes from its own
 * checkpoint. Every stage's output goes to the console (with --background, to `<build>/build.log`).
 *
 *   npm run model:base                  # run the stages that are not done yet
 *   npm run model:base -- --background  # the same, detached: follow it with `tail -f <build>/build.log`
 *   npm run model:base -- --ship        # then copy the finished model into models/spindle-base
 *   npm run model:base -- --until train # stop after a stage (measure a build before evaluating it in full)
 *   npm run model:base -- --init <earlier build>/model/model.safetensors --steps 1500 --lr 1e-3
 *                                       # fine-tune an earlier build on this build's data (same tokenizer.json)
 *
 * The Python stages need PyTorch 2 (its fused attention is 4-6x PyTorch 1's speed at 2,048 positions),
 * `tokenizers` and, for the transformers check, `transformers`: the `venv` stage makes a virtual
 * environment in the build folder with them (`SPINDLE_BUILD_PYTHON` names another interpreter instead).
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildDir } from './build-dir.ts';

const { values: args } = parseArgs({
  options: {
    background: { type: 'boolean', default: false },
    ship: { type: 'boolean', default: false },
    steps: { type: 'string', default: '5000' },
    until: { type: 'string' },
    init: { type: 'string' },
    lr: { type: 'string', default: '2e-3' },
    warmup: { type: 'string', default: '200' },
  },
});
const dir = buildDir();
const model = join(dir, 'model');
const log = join(dir, 'build.log');
const python = process.env.SPINDLE_BUILD_PYTHON ?? join(dir, 'venv', 'bin', 'python');
/** What the shipped folder holds: the model, its tokenizer in HF layout, the builder's reference logits and the card. */
const SHIPPED_FILES = [
  'config.json',
  'model.safetensors',
  'tokenizer.json',
  'tokenizer_config.json',
  'generation_config.json',
  'reference-logits.json',
  'README.md',
  'eval.json',
  'generalization.json',
];

mkdirSync(dir, { recursive: true });
if (args.background) {
  const forwarded = process.argv.slice(2).filter((a) => a !== '--background');
  const out = openSync(log, 'a');
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1], ...forwarded], {
    detached: true,
    stdio: ['ignore', out, out],
  });
  child.unref();
  console.log(`building in the background (pid ${child.pid}); follow it with: tail -f ${log}`);
  process.exit(0);
}

const say = (line: string) => console.log(line);

interface Stage {
  name: string;
  /** About how long it takes on 2 cores. */
  takes: string;
  command: string[];
}

const tsx = (script: string, ...rest: string[]) => [
  process.execPath,
  ...process.execArgv,
  join('scripts/base-model', script),
  ...rest,
];
const stages: Stage[] = [
  {
    name: 'venv',
    takes: '1 min',
    command: [
      '/bin/sh',
      '-c',
      `python3 -m venv --system-site-packages ${join(dir, 'venv')} && ${join(dir, 'venv', 'bin', 'pip')} install -q 'torch>=2' tokenizers transformers`,
    ],
  },
  { name: 'corpus', takes: '10 s', command: tsx('corpus.ts', '--out', join(dir, 'corpus.txt')) },
  {
    name: 'tokenizer',
    takes: '20 s',
    command: [
      python,
      'scripts/base-model/tokenizer.py',
      '--corpus',
      join(dir, 'corpus.txt'),
      '--out',
      join(dir, 'tokenizer.json'),
      '--vocab',
      '2048',
    ],
  },
  {
    name: 'transcripts',
    takes: '3 min',
    command: tsx(
      'transcripts.ts',
      '--universe',
      '--tokenizer',
      join(dir, 'tokenizer.json'),
      '--context',
      '2048',
      '--out',
      join(dir, 'transcripts.jsonl'),
      '--finetune',
      join(dir, 'finetune.jsonl'),
      '--heldout',
      join(dir, 'heldout.jsonl'),
    ),
  },
  {
    name: 'train',
    takes: '50 min (resumable)',
    command: [
      python,
      'scripts/base-model/train.py',
      '--config',
      'scripts/base-model/bpe-config.json',
      '--data',
      join(dir, 'transcripts.jsonl'),
      '--heldout',
      join(dir, 'heldout.jsonl'),
      '--out',
      model,
      '--steps',
      String(args.steps),
      '--lr',
      String(args.lr),
      '--warmup',
      String(args.warmup),
      '--save-every',
      '250',
      '--heldout-stride',
      '6',
      // From scratch, half the first 1,000 steps copy lists back: copying what the context shows is learnt
      // first, on text that can be reproduced no other way, before the tool transcripts, whose names it can
      // memorise. A fine-tune starts from weights that copy already.
      ...(args.init === undefined ? ['--focus', 'copy_drill=0.5', '--focus-until', '1000'] : ['--init', args.init]),
    ],
  },
  {
    name: 'package',
    takes: '15 s',
    command: tsx('package.ts', '--dir', model, '--tokenizer', join(dir, 'tokenizer.json')),
  },
  {
    name: 'interop-rows',
    takes: '30 s',
    command: tsx('interop-rows.ts', '--dir', model, '--out', join(dir, 'interop-rows.jsonl')),
  },
  {
    name: 'hf-check',
    takes: '20 s',
    command: [python, 'scripts/base-model/hf_check.py', '--dir', model, '--rows', join(dir, 'interop-rows.jsonl')],
  },
  {
    name: 'evaluate',
    takes: '20 min',
    command: tsx('evaluate.ts', '--dir', model, '--heldout', join(dir, 'heldout.jsonl')),
  },
  {
    name: 'generalization',
    takes: '20 min',
    command: tsx('generalization.ts', '--dir', model, '--out', join(model, 'generalization.json')),
  },
  {
    name: 'card',
    takes: '5 s',
    command: tsx('model-card.ts', '--dir', model, '--heldout', join(dir, 'heldout.jsonl')),
  },
];

const skipVenv = process.env.SPINDLE_BUILD_PYTHON !== undefined;
if (args.until !== undefined && !stages.some((s) => s.name === args.until)) {
  console.error(`--until ${args.until}: no such stage; the stages are ${stages.map((s) => s.name).join(', ')}`);
  process.exit(2);
}
for (const [i, stage] of stages.entries()) {
  const done = join(dir, `${stage.name}.done`);
  if (existsSync(done) || (stage.name === 'venv' && skipVenv)) {
    say(`[${i + 1}/${stages.length}] ${stage.name}: done`);
    continue;
  }
  say(`[${i + 1}/${stages.length}] ${stage.name} (about ${stage.takes} on 2 cores): ${stage.command.join(' ')}`);
  const started = Date.now();
  const run = spawnSync(stage.command[0], stage.command.slice(1), { stdio: 'inherit' });
  if (run.status !== 0) {
    say(
      `${stage.name} failed (exit ${run.status ?? run.signal}); what finished is kept: run the same command again to go on from this stage`,
    );
    process.exit(1);
  }
  writeFileSync(done, `${new Date().toISOString()} ${Math.round((Date.now() - started) / 1000)} s\n`);
  if (stage.name === args.until) {
    say(`stopped after ${stage.name} (--until); run the command again without it to go on`);
    process.exit(0);
  }
}

if (args.ship) {
  for (const name of SHIPPED_FILES) copyFileSync(join(model, name), join('models/spindle-base', name));
  say(`copied ${SHIPPED_FILES.join(', ')} into models/spindle-base`);
}
say(`the build is complete: ${model}`);
