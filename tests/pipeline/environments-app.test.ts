/**
 * The Environments screen's operations (src/pipeline/app/environments.ts) over a fake IndexedDB and the
 * real engine's environment calls (environment-workshop.ts), and the other screens' view of a saved
 * user environment: the Playground lists it, generates its tasks and plays its expert in a rollout
 * worker (a Node worker_thread here) and judges it in the engine; Train lists it and a new run carries its source.
 */
import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type RunConfig } from '../../src/config/schema.ts';
import type { EnvironmentSource } from '../../src/contracts.ts';
import { environmentOperations, storedSources } from '../../src/pipeline/app/environments.ts';
import { playgroundOperations } from '../../src/pipeline/app/playground.ts';
import { trainOperations, withUserEnvironments } from '../../src/pipeline/app/train.ts';
import { trajectoryOperations } from '../../src/pipeline/app/trajectories.ts';
import { Engine } from '../../src/pipeline/engine/browser-engine.ts';
import type { EngineDeps } from '../../src/pipeline/engine/engine-api.ts';
import type { RunController } from '../../src/pipeline/operations/events.ts';
import { spawnNodeRolloutWorker } from '../../src/pipeline/platform/node.ts';
import { openStore, type Store } from '../../src/store/index.ts';

const EXAMPLE = readFileSync(new URL('../../examples/envs/treasure-hunt.js', import.meta.url), 'utf8');

let store: Store;
const getStore = async () => store;
let engine: Engine;

beforeAll(async () => {
  store = await openStore({ factory: new IDBFactory() });
  // Only the engine's environment calls and expert episodes are used: no backend, no model.
  engine = new Engine({
    initBackend: async () => ({
      backend: 'cpu',
      reason: 'test',
      threads: false,
      simd: false,
      adapter: null,
      forced: true,
    }),
    deviceLost: () => null,
    openStore: getStore,
    loadModel: async () => {
      throw new Error('no model in this test');
    },
    baseModelMissing: () => 'no model in this test',
    spawnWorker: (index, generator) => spawnNodeRolloutWorker(index, generator),
    cores: 1,
  } as EngineDeps);
});
afterAll(() => store.db.close());

describe('environment operations', () => {
  it('checks the example in the engine, saves it, and refuses a broken module with its line', async () => {
    const ops = environmentOperations(getStore, () => engine);
    expect((await ops.list()).user).toEqual([]);
    expect((await ops.list()).builtins.map((b) => b.name)).toContain('arith_tool');
    expect(ops.example()).toMatchObject({ kind: 'module', file: 'treasure-hunt.js' });

    const progress: string[] = [];
    const checked = await ops.check(ops.example(), (line) => progress.push(line), new AbortController().signal);
    if (!checked.ok) throw new Error(checked.problems.join('\n'));
    expect(checked.source.name).toBe('treasure_hunt');
    expect(checked.audit.samples).toHaveLength(5);
    expect(checked.audit.problems).toEqual([]);
    expect(checked.audit.levels.map((l) => l.expert?.successes)).toEqual([8, 8, 8, 8]);
    // Each step as it starts ("…"), then what it found.
    expect(progress[0]).toBe('loading the environment…');
    expect(progress[1]).toMatch(
      /^loaded treasure_hunt: levels 1, 2, 3, 4; tools read_note, unlock; runs in a thread of its own$/,
    );
    expect(progress.slice(-3)).toEqual([
      'level 4: expert 8/8',
      'level 4: the task-blind policies on 8 items…',
      'level 4: best task-blind policy 0/8 = 0% [0, 32] (empty answer)',
    ]);

    const saved = await ops.save(ops.example(), checked.audit.problems);
    expect(saved).toMatchObject({ ok: true, summary: { name: 'treasure_hunt', kind: 'module', status: 'passed' } });
    expect((await ops.list()).user.map((u) => [u.name, u.status])).toEqual([['treasure_hunt', 'passed']]);
    expect(await ops.open('treasure_hunt')).toEqual(ops.example());

    // A syntax error at line 50: the check and the save both name it, and nothing is stored.
    const lines = EXAMPLE.split('\n');
    lines[49] = `${lines[49]} {{`;
    const broken = { kind: 'module' as const, source: lines.join('\n'), file: 'treasure-hunt.js' };
    const failed = await ops.check(broken, () => {}, new AbortController().signal);
    expect(failed).toMatchObject({ ok: false, line: 50 });
    expect(await ops.save(broken, null)).toMatchObject({ ok: false, line: 50 });
    // A built-in's name is refused; the starter passes its own check.
    expect(
      await ops.save({ kind: 'module', source: EXAMPLE.replace("'treasure_hunt'", "'arith_tool'"), file: null }, null),
    ).toMatchObject({ ok: false, problems: [expect.stringContaining('built-in')] });
    const starter = await ops.check(ops.starter(), () => {}, new AbortController().signal);
    expect(starter.ok && starter.audit.problems).toEqual([]);

    expect(ops.exportFile(ops.example(), 'treasure_hunt')).toEqual({
      fileName: 'treasure_hunt.js',
      mime: 'text/javascript',
      text: EXAMPLE,
    });
    expect(await ops.importFile({ name: 'hunt.js', bytes: new TextEncoder().encode(EXAMPLE) })).toEqual({
      kind: 'module',
      source: EXAMPLE,
      file: 'hunt.js',
    });
    await expect(ops.importFile({ name: 'notes.txt', bytes: new Uint8Array() })).rejects.toThrow(
      /import a JavaScript module/,
    );
    // …and from a URL, read with the network bounds; a page that is not the file is refused, naming the URL.
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      if (req.url === '/env/hunt.js') res.end(EXAMPLE);
      else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      expect(await ops.importUrl(`${base}/env/hunt.js`)).toEqual({
        draft: { kind: 'module', source: EXAMPLE, file: 'hunt.js' },
        fileName: 'hunt.js',
      });
      await expect(ops.importUrl(`${base}/missing.js`)).rejects.toThrow(/missing\.js: HTTP 404/);
      await expect(ops.importUrl('file:///etc/passwd')).rejects.toThrow(/not an http\(s\) URL/);
    } finally {
      server.close();
    }
  });

  it('stops a module that loops at its deadline, lets a busy top level load, and cancels a check at once', async () => {
    const ops = environmentOperations(getStore, () => engine);
    const looping = {
      kind: 'module' as const,
      source: EXAMPLE.replace('sample(rng, level) {', 'sample(rng, level) {\n    while (true) {}'),
      file: null,
    };
    const result = await ops.check(looping, () => {}, new AbortController().signal);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems.join(' ')).toMatch(/time|deadline|interrupted/i);

    // Loading has the module's own deadline: a top level that computes for a while loads; one that never ends is stopped.
    const busyTop = {
      kind: 'module' as const,
      source: `let t = 0;\nfor (let i = 0; i < 300000; i++) t += i % 7;\n${EXAMPLE}`,
      file: null,
    };
    expect(await engine.loadEnvironment(busyTop)).toMatchObject({ ok: true, source: { name: 'treasure_hunt' } });
    expect(
      await engine.loadEnvironment({ kind: 'module', source: 'while (true) {}\nexport default {};', file: null }),
    ).toMatchObject({ ok: false, problems: [expect.stringMatching(/timeout/)] });

    const controller = new AbortController();
    const pending = ops.check(ops.example(), () => controller.abort(), controller.signal);
    await expect(pending).rejects.toThrow();
  });

  it('imports a task file through the engine, checks and saves it, and exports its rows as JSONL', async () => {
    const ops = environmentOperations(getStore, () => engine);
    const csv = `question,answer,level\n${Array.from({ length: 40 }, (_, i) => `What is ${i} + ${2 * i + 3}?,${3 * i + 3},1`).join('\n')}\n`;
    const draft = await ops.importFile({ name: 'Quick Sums.csv', bytes: new TextEncoder().encode(csv) });
    expect(draft).toMatchObject({ kind: 'tasks', name: 'quick_sums', file: 'Quick Sums.csv' });
    const checked = await ops.check(draft, () => {}, new AbortController().signal);
    if (!checked.ok) throw new Error(checked.problems.join('\n'));
    expect(checked.audit.samples).toHaveLength(5);
    expect(await ops.save(draft, checked.audit.problems)).toMatchObject({
      ok: true,
      summary: { name: 'quick_sums', kind: 'tasks' },
    });
    const exported = ops.exportFile(draft, 'quick_sums');
    expect(exported.fileName).toBe('quick_sums.jsonl');
    expect(exported.text.trim().split('\n')).toHaveLength(40);
    await expect(
      ops.importFile({ name: 'bad.csv', bytes: new TextEncoder().encode('question,answer\n"unclosed,1\n') }),
    ).rejects.toThrow();
    await ops.remove('quick_sums');
    expect((await ops.list()).user.map((u) => u.name)).toEqual(['treasure_hunt']);
  });

  it('puts a saved environment in the Playground (tasks, expert episode, judging) and Train, and a new run carries its source', async () => {
    const playground = playgroundOperations(getStore, () => engine);
    const listed = await playground.environments();
    expect(listed.find((e) => e.id === 'treasure_hunt')).toMatchObject({
      title: 'treasure hunt (yours)',
      levels: [1, 2, 3, 4],
    });
    expect(listed.find((e) => e.id === 'arith_tool')).toBeTruthy();

    const [task] = await playground.tasks('treasure_hunt', 2, 2);
    expect(task).toMatchObject({ env: 'treasure_hunt', difficulty: 2 });
    expect(task.prompt).toMatch(/^Start at note n/);
    const trajectory = await playground.runEpisode(
      { task, seed: 1, policy: 'expert' },
      () => {},
      new AbortController().signal,
    );
    expect(trajectory.steps.map((s) => s.tool_call?.tool_name)).toEqual(['read_note', 'read_note', 'unlock']);
    const [judged] = await playground.judge([trajectory], new AbortController().signal);
    expect(judged.votes.some((v) => v.score === 1)).toBe(true);

    expect(await trainOperations(getStore).environments()).toEqual(
      expect.arrayContaining(['arith_tool', 'treasure_hunt']),
    );
    expect((await trajectoryOperations(getStore).facets()).envs).toContain('treasure_hunt');
    const starts: { environments?: EnvironmentSource[] }[] = [];
    const controller = withUserEnvironments(
      {} as RunController,
      async (_config, options) => {
        starts.push(options);
        return 'run-1';
      },
      getStore,
    );
    const config: RunConfig = {
      ...DEFAULT_CONFIG,
      tasks: { ...DEFAULT_CONFIG.tasks, environments: ['arith_tool', 'treasure_hunt'] },
    };
    await controller.start(config);
    expect(starts[0].environments?.map((s) => s.name)).toEqual(['treasure_hunt']);
    expect(await storedSources(store, ['arith_tool'])).toEqual([]);
  });
});
