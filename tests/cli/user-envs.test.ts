/** Your own environments through the CLI: envs add / audit / list / remove, and --env-file on collect, train and eval. */
import { copyFileSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { strFromU8, unzipSync } from 'fflate';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openFileStore } from '../../src/store/file-store.ts';
import { getRun, listRuns } from '../../src/store/index.ts';
import { cli, nanoModelDir, tempDir, tinyConfig, writeConfig } from './helpers.ts';

const EXAMPLE = join(import.meta.dirname, '../../examples/envs/treasure-hunt.js');
let model: string;
let dir: string;

beforeAll(async () => {
  model = await nanoModelDir();
  dir = tempDir();
  copyFileSync(EXAMPLE, join(dir, 'hunt.js'));
  writeFileSync(
    join(dir, 'qa.csv'),
    'question,answer\n"What is 2+2?",4\n"What is 3+5?",8\n"What is 7+6?",13\n"What is 9+9?",18\n"What is 1+4?",5\n',
  );
}, 60_000);

describe('spindle envs add / audit / list / remove', () => {
  it('adds a module after its audit, lists it beside the built-ins, and forgets it', async () => {
    const added = await cli(dir, 'envs', 'add', 'hunt.js', '--items', '4');
    expect(added.code, `${added.out}\n${added.err}`).toBe(0);
    expect(added.out).toMatch(/No problems: treasure_hunt is ready to train on\.\nadded treasure_hunt \(module\)/);
    const listed = await cli(dir, 'envs');
    expect(listed.out).toMatch(/treasure_hunt\s+multi-step,example\s+1-4\s+read_note,unlock\s+hunt\.js/);
    expect(listed.out).toMatch(/arith_tool\s+\S+\s+1-5\s+calc\s+built-in/);
    // The policy probe is bootstrap.test.ts's; here the audit of a stored module is what is checked.
    const audited = await cli(dir, 'envs', 'audit', 'treasure_hunt', '--items', '3', '--policy-items', '0');
    expect(audited.code, `${audited.out}\n${audited.err}`).toBe(0);
    expect((await cli(dir, 'envs', 'remove', 'treasure_hunt')).out).toMatch(/removed treasure_hunt/);
    expect((await cli(dir, 'envs')).out).not.toMatch(/treasure_hunt/);
  }, 180_000);

  it('refuses a module whose audit finds a shortcut, naming it, unless --force', async () => {
    writeFileSync(
      join(dir, 'lenient.js'),
      (await import('node:fs'))
        .readFileSync(EXAMPLE, 'utf8')
        .replace("name: 'treasure_hunt'", "name: 'lenient'")
        .replace(
          'if (state.opened && named) return 1;',
          'if (answer.trim() === "yes" || (state.opened && named)) return 1;',
        ),
    );
    const refused = await cli(dir, 'envs', 'add', 'lenient.js', '--items', '4', '--levels', '1');
    expect(refused.code).toBe(2); // --levels is no option: a usage error first
    const bad = await cli(dir, 'envs', 'add', 'lenient.js', '--items', '4');
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/problem: level 1: always "yes" scores 4\/4 = 100% \[\d+, 100\] without reading the task/);
    expect(bad.err).toMatch(/lenient was not added: the audit found 4 problems/);
    expect((await cli(dir, 'envs', 'add', 'lenient.js', '--items', '4', '--force')).code).toBe(0);
    expect((await cli(dir, 'envs', 'remove', 'lenient')).code).toBe(0);
  }, 60_000);

  it('names the line of a broken module and the row of a broken task file', async () => {
    writeFileSync(
      join(dir, 'broken.js'),
      'export default {\n  name: "broken",\n  sample(rng, level) { return { prompt: "x" ; },\n};\n',
    );
    const broken = await cli(dir, 'envs', 'audit', 'broken.js');
    expect(broken.code).toBe(1);
    expect(broken.err).toMatch(/broken\.js: .*broken\.js:3/);
    writeFileSync(join(dir, 'bad.jsonl'), '{"prompt": "a", "answer": "1"}\n{"answer": "2"}\n');
    const bad = await cli(dir, 'envs', 'audit', 'bad.jsonl');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/bad\.jsonl: .*line 2.*prompt/);
  });
});

describe('the check has one budget and a size cap', () => {
  it('envs add of a module whose tool loops stops at --budget, naming the step, after reporting each', async () => {
    writeFileSync(
      join(dir, 'spin.js'),
      `export default {
  name: 'spin', description: 'd', tags: [], levels: [1],
  tools: { spin: { description: 'spins', parameters: {}, run() { for (;;) {} } } },
  sample(rng) { const n = rng.int(1, 1000); return { prompt: 'Say ' + n, data: { n }, key: String(n) }; },
  evaluate(task, t) { return String(t.final_response) === String(task.data.n) ? 1 : 0; },
  expert(task) { return [{ tool: 'spin', args: {} }, String(task.data.n)]; },
};`,
    );
    // The steps before the expert take a second or two (more on a loaded machine); the expert's 8 calls of
    // spin each run to the tool call's deadline, so the budget runs out there.
    const r = await cli(dir, 'envs', 'add', 'spin.js', '--budget', '10');
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(
      /audit: loading spin\.js…\naudit: building spin…\naudit: sampling 5 tasks…\naudit: 5 tasks sampled\naudit: level 1: the expert on 8 tasks…/,
    );
    expect(r.err).toMatch(/the check ran out of its 10 s budget during "level 1: the expert on 8 tasks"/);
    expect((await cli(dir, 'envs')).out).not.toMatch(/^spin /m);
  }, 60_000);

  it('a task file above the size cap is refused before it is read', async () => {
    const big = join(dir, 'big.jsonl');
    writeFileSync(big, '');
    truncateSync(big, 33 * 1024 * 1024); // sparse: its size is what is refused, nothing is read
    const r = await cli(dir, 'envs', 'audit', 'big.jsonl');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/big\.jsonl is 34603008 bytes, above the 33554432 \(32 MiB\) an environment file may have/);
  });
});

describe('an environment from a URL', () => {
  it('envs add and audit read a module and a task file over HTTP; a missing one fails naming the URL', async () => {
    const { createServer } = await import('node:http');
    const example = readFileSync(EXAMPLE, 'utf8');
    const server = createServer((req, res) => {
      if (req.url === '/envs/hunt.js') res.end(example);
      else if (req.url === '/tasks/qa.csv')
        res.end(
          `question,answer\n${Array.from({ length: 40 }, (_, i) => `"What is ${i} + ${i + 7}?",${2 * i + 7}`).join('\n')}\n`,
        );
      else {
        res.statusCode = 404;
        res.end('no');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const work = tempDir();
      const added = await cli(work, 'envs', 'add', `${base}/envs/hunt.js`, '--items', '3');
      expect(added.code).toBe(0);
      expect(added.out).toMatch(/added treasure_hunt \(module\)/);
      expect((await cli(work, 'envs', 'audit', `${base}/tasks/qa.csv`, '--items', '2')).out).toMatch(/Environment qa/);
      const missing = await cli(work, 'envs', 'audit', `${base}/nope.js`);
      expect(missing.err).toMatch(/HTTP 404; check the URL/);
    } finally {
      server.close();
    }
  }, 60_000);
});

describe('--env-file and tasks.task_file', () => {
  it('collect, train and eval use a module and a task file, and the run keeps their sources', async () => {
    const work = tempDir();
    copyFileSync(EXAMPLE, join(work, 'hunt.js'));
    writeFileSync(
      join(work, 'qa.csv'),
      'question,answer\n"What is 2+2?",4\n"What is 3+5?",8\n"What is 7+6?",13\n"What is 9+9?",18\n"What is 1+4?",5\n"What is 6+1?",7\n',
    );
    writeConfig(
      work,
      tinyConfig((c) => {
        c.tasks.environments = [];
        c.tasks.task_file = 'qa.csv';
        c.tasks.verifier = { type: 'number' } as never;
        c.tasks.difficulty_range = [1, 1];
      }),
    );
    const collected = await cli(
      work,
      'collect',
      '--config',
      'run.yaml',
      '--env-file',
      'hunt.js',
      '--policy',
      'expert',
      '--groups',
      '2',
    );
    expect(collected.code).toBe(0);
    expect(collected.out).toMatch(/2 trajectories in 2 groups[\s\S]*success 100\.0%/);
    const trained = await cli(work, 'train', '--config', 'run.yaml', '--env-file', 'hunt.js', '--model', model);
    expect(trained.code).toBe(0);
    expect(trained.out).toMatch(/eval qa at step 1 \(test\): \d+\/\d+ = \d+% \[\d+, \d+\]/);
    expect(trained.out).toMatch(/eval treasure_hunt at step 1 \(test\): \d+\/\d+ = \d+% \[/);
    const store = await openFileStore(join(work, '.spindle'));
    const runs = await listRuns(store);
    const trainRun = await getRun(store, runs[0].id);
    expect(trainRun!.config.tasks.environments).toEqual(['qa', 'treasure_hunt']);
    expect(trainRun!.environments!.map((s) => [s.kind, s.name, s.file])).toEqual([
      ['tasks', 'qa', 'qa.csv'],
      ['module', 'treasure_hunt', 'hunt.js'],
    ]);
    await store.close();
    // The adapter names them in its card and ships their sources.
    expect((await cli(work, 'export', 'adapter', '--run', trainRun!.id, '--output', 'a.zip')).code).toBe(0);
    const files = unzipSync(readFileSync(join(work, 'a.zip')));
    expect(strFromU8(files['spindle_environments/treasure_hunt.js'])).toBe(readFileSync(EXAMPLE, 'utf8'));
    expect(strFromU8(files['spindle_environments/qa.jsonl']).trim().split('\n')).toHaveLength(6);
    expect(strFromU8(files['README.md'])).toMatch(/\| treasure_hunt \| module \| hunt\.js \| [0-9a-f]{16} \|/);
    const evaluated = await cli(
      work,
      'eval',
      '--env-file',
      'hunt.js',
      '--items',
      '2',
      '--model',
      model,
      '--max-new-tokens',
      '8',
    );
    expect(evaluated.code).toBe(0);
    expect(evaluated.out).toMatch(/treasure_hunt/);
  }, 180_000);
});
