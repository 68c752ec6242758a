/**
 * The group step inside a real training run (rollout workers on worker_threads, the tiny model): a
 * group judge on 127.0.0.1 is called once per group and its votes land on every stored trajectory beside
 * the environment's own `env:NAME` vote; a run with `judge.verifier_gate: false` says so.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateRunConfig } from '../../src/config/validate.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import type { RunEvent } from '../../src/pipeline/operations/events.ts';
import { createNodeRun } from '../../src/pipeline/platform/node.ts';
import { VERIFIER_GATE_OFF_WARNING } from '../../src/pipeline/operations/run.ts';
import { getRun, openStore, TrajectoryCommons, type Store } from '../../src/store/index.ts';
import { writeTinyModel } from '../pipeline/tiny-model.ts';
import { startChatServer, type ChatServer } from './chat-server.ts';

let modelDir: string;
let store: Store;
let server: ChatServer;

beforeAll(async () => {
  await initBackend();
  modelDir = await writeTinyModel(5, 'spindle-group-step-model-');
  store = await openStore({ factory: new IDBFactory() });
  server = await startChatServer('Both tried.\nVERDICT: {"1": 0.7, "2": 0.4}');
});
afterAll(async () => {
  store.db.close();
  await server.close();
});

describe('a run with a group judge', () => {
  it("judges each group in one call, keeps the verifier's vote, and warns when the gate is off", async () => {
    const { config, errors } = validateRunConfig({
      name: 'group-step',
      model: { base_model: modelDir },
      lora: { r: 2, alpha: 4, target_modules: ['q_proj'] },
      training: { max_steps: 1, batch_size: 2, group_size: 2, checkpoint_every: 1, eval_interval: 10 },
      sampling: { max_new_tokens: 8 },
      safety: { enabled: false },
      trajectory_collection: { n_workers: 1, max_steps_per_trajectory: 1 },
      tasks: { environments: ['arith_tool'], eval_items: 1 },
      judge: {
        judges: [
          { type: 'rule' },
          { type: 'group', id: 'ruler', base_url: server.baseUrl, model: 'ranker', timeout_ms: 5_000, max_retries: 0 },
        ],
        verifier_gate: false,
      },
    });
    if (!config) throw new Error(JSON.stringify(errors));
    const run = createNodeRun({ store, cores: 1 });
    const warnings: string[] = [];
    run.subscribe((e: RunEvent) => {
      if (e.type === 'error' && !e.fatal) warnings.push(e.message);
    });
    const runId = await run.start(config);
    await run.done();
    expect((await getRun(store, runId))?.status).toBe('completed');
    expect(warnings).toContain(VERIFIER_GATE_OFF_WARNING);

    const trained = [];
    for await (const t of new TrajectoryCommons(store).load({ run_id: runId, split: 'train' })) trained.push(t);
    expect(trained.length).toBeGreaterThan(0);
    const groups = new Set(trained.map((t) => t.group_id));
    // One group call per group, none per episode (the workers leave group judges to the group step).
    expect(server.received.filter((r) => r.body.model === 'ranker')).toHaveLength(groups.size);
    for (const t of trained) {
      expect(t.votes.map((v) => v.judge_id)).toEqual(['rule', 'env:arith_tool', 'ruler']);
      const ruler = t.votes.find((v) => v.judge_id === 'ruler')!.score!;
      expect([0.7, 0.4]).toContain(ruler);
      // Gate off: the plain mean of the rule judge and the group judge.
      expect(t.judge_score).toBeCloseTo((t.votes[0].score! + ruler) / 2, 12);
    }
  });
});
