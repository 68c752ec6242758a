import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import {
  decodeCheckpoint,
  encodeCheckpoint,
  loadResumeCheckpoint,
} from '../../src/pipeline/operations/checkpoint-codec.ts';
import { openStore, putTrajectories, saveCheckpoint } from '../../src/store/index.ts';
import { CHECKPOINT_VERSION, type TrainerCheckpoint } from '../../src/train/checkpoint.ts';
import { makeTrajectory } from '../store/fixtures.ts';

/** A trainer checkpoint with a two-item replay buffer; the fields the codec does not look into are stand-ins. */
function checkpoint(): TrainerCheckpoint {
  const trajectories = [makeTrajectory({ run_id: 'run-c' }), makeTrajectory({ run_id: 'run-c' })];
  return {
    version: CHECKPOINT_VERSION,
    run_id: 'run-c',
    step: 3,
    config: {} as TrainerCheckpoint['config'],
    setup: {} as TrainerCheckpoint['setup'],
    weights: { kind: 'lora', tensors: [['lora_A', { shape: [2, 2], data: new Float32Array([1, 2, 3, 4]) }]] },
    optimizer: { step: 3, m: [new Float32Array([0.5])], v: [new Float32Array([0.25])], pending: null, pendingCount: 0 },
    replay: {
      capacity: 100,
      admitThreshold: 0,
      nextSeq: 2,
      items: trajectories.map((trajectory, seq) => ({ trajectory, priority: 0.5 + seq, seq })),
    },
    curriculum: {} as TrainerCheckpoint['curriculum'],
    safety: { baselines: null, best: null, lastCheck: null },
    rng: {} as TrainerCheckpoint['rng'],
    online_ratio: 0.7,
    rollback: null,
    sft_step: 0,
    created_at: 1,
  };
}

describe('the checkpoint codec', () => {
  it('keeps the replay buffer as ids of stored trajectories and reads it back from the store', async () => {
    const store = await openStore({ factory: new IDBFactory() });
    const ckpt = checkpoint();
    await putTrajectories(
      store,
      ckpt.replay.items.map((i) => i.trajectory),
    );
    const input = encodeCheckpoint(ckpt);
    // No trajectory text in the record: its size does not grow with what the buffer holds.
    expect(JSON.stringify(input.meta)).not.toContain(ckpt.replay.items[0].trajectory.task_description);
    await saveCheckpoint(store, input);

    const back = await loadResumeCheckpoint(store, 'run-c');
    expect(back?.step).toBe(3);
    expect(back?.replay.nextSeq).toBe(2);
    expect(back?.replay.items.map((i) => [i.trajectory.id, i.priority, i.seq])).toEqual(
      ckpt.replay.items.map((i) => [i.trajectory.id, i.priority, i.seq]),
    );
    expect(back?.replay.items[1].trajectory.final_response).toBe(ckpt.replay.items[1].trajectory.final_response);
    expect(Array.from(back!.optimizer.m[0])).toEqual([0.5]);
    store.db.close();
  });

  it('decodes without the store (a transfer needs only the weights) with an empty replay buffer', () => {
    const input = encodeCheckpoint(checkpoint());
    const record = {
      id: 'c',
      run_id: 'run-c',
      step: 3,
      created_at: 1,
      adapter: input.adapter,
      optimizer: input.optimizer,
      meta: input.meta ?? {},
    };
    const back = decodeCheckpoint(record);
    expect(back.replay.items).toEqual([]);
    expect(back.weights.tensors[0][0]).toBe('lora_A');
  });
});
