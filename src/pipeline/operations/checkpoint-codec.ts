/**
 * TrainerCheckpoint ⇄ the store's checkpoint record. The trainable weights go in as a safetensors file
 * with PEFT key names (so the latest checkpoint of a LoRA run is also its exportable adapter), the
 * optimizer moments as a second safetensors file, and everything else (curriculum, RNG, safety state,
 * rollback point) as structured-clone data in `meta`. The replay buffer holds trajectories the run has
 * already stored (every group is stored before it is trained on), so the checkpoint keeps only their ids
 * and priorities: a checkpoint stays small enough to take after every update however full the buffer is.
 */
import type { Trajectory } from '../../contracts.ts';
import { getTrajectories, loadLatestCheckpoint, type Store } from '../../store/index.ts';
import type { CheckpointInput } from '../../store/checkpoints.ts';
import type { CheckpointRecord } from '../../store/records.ts';
import type { TrainerCheckpoint } from '../../train/checkpoint.ts';
import type { ReplayState } from '../../train/replay-buffer.ts';
import type { OptimizerState } from '../../train/optimizer.ts';
import { readSafetensors, writeSafetensors } from '../../hub/safetensors.ts';
import type { HostTensors } from '../../model/transformer.ts';

const toBuffer = (bytes: Uint8Array): ArrayBuffer => bytes.slice().buffer as ArrayBuffer;

function encodeOptimizer(state: OptimizerState): ArrayBuffer {
  const tensors: HostTensors = new Map();
  state.m.forEach((m, i) => tensors.set(`m.${i}`, { shape: [m.length], data: m }));
  state.v.forEach((v, i) => tensors.set(`v.${i}`, { shape: [v.length], data: v }));
  state.pending?.forEach((p, i) => tensors.set(`pending.${i}`, { shape: [p.length], data: p }));
  return toBuffer(
    writeSafetensors(tensors, {
      step: String(state.step),
      pending_count: String(state.pendingCount),
      variables: String(state.m.length),
    }),
  );
}

function decodeOptimizer(buffer: ArrayBuffer): OptimizerState {
  const { tensors, metadata } = readSafetensors(new Uint8Array(buffer), 'optimizer state');
  const n = Number(metadata.variables);
  const read = (prefix: string) =>
    Array.from({ length: n }, (_, i) => {
      const t = tensors.get(`${prefix}.${i}`);
      if (!t) throw new Error(`optimizer state: tensor ${prefix}.${i} is missing`);
      return t.data;
    });
  return {
    step: Number(metadata.step),
    m: read('m'),
    v: read('v'),
    pending: tensors.has('pending.0') ? read('pending') : null,
    pendingCount: Number(metadata.pending_count),
  };
}

/** A replay item as the checkpoint keeps it: the stored trajectory's id instead of the trajectory. */
interface ReplayRef {
  trajectory_id: string;
  priority: number;
  seq: number;
}

type StoredState = Omit<TrainerCheckpoint, 'weights' | 'optimizer' | 'replay'> & {
  replay: Omit<ReplayState, 'items'> & { items?: ReplayState['items']; refs?: ReplayRef[] };
};

export function encodeCheckpoint(ckpt: TrainerCheckpoint): CheckpointInput {
  const { weights, optimizer, replay, ...rest } = ckpt;
  const adapter = toBuffer(writeSafetensors(new Map(weights.tensors), { format: 'pt', spindle_weights: weights.kind }));
  const refs = replay.items.map((i) => ({ trajectory_id: i.trajectory.id, priority: i.priority, seq: i.seq }));
  const state: StoredState = {
    ...rest,
    replay: { capacity: replay.capacity, admitThreshold: replay.admitThreshold, nextSeq: replay.nextSeq, refs },
  };
  return {
    run_id: ckpt.run_id,
    step: ckpt.step,
    adapter,
    optimizer: encodeOptimizer(optimizer),
    meta: { checkpoint: state },
  };
}

/** The stored trajectories a checkpoint's replay buffer refers to. */
function replayTrajectoryIds(record: CheckpointRecord): string[] {
  return ((record.meta.checkpoint as StoredState | undefined)?.replay.refs ?? []).map((r) => r.trajectory_id);
}

/**
 * The trainer state of a record. `trajectories` resolves the replay buffer's ids; without it (a transfer
 * needs only the weights) the buffer comes back empty, and so does an item whose trajectory was deleted.
 */
export function decodeCheckpoint(
  record: CheckpointRecord,
  trajectories: ReadonlyMap<string, Trajectory> = new Map(),
): TrainerCheckpoint {
  const rest = record.meta.checkpoint as StoredState | undefined;
  if (!rest || !record.optimizer)
    throw new Error(
      `checkpoint ${record.id} was not written by the trainer (no trainer state in it); it cannot resume a run`,
    );
  const { tensors, metadata } = readSafetensors(new Uint8Array(record.adapter), `checkpoint ${record.id}`);
  const { refs, items, ...replay } = rest.replay;
  const resolved =
    items ??
    (refs ?? []).flatMap((r) => {
      const trajectory = trajectories.get(r.trajectory_id);
      return trajectory ? [{ trajectory, priority: r.priority, seq: r.seq }] : [];
    });
  return {
    ...rest,
    replay: { ...replay, items: resolved },
    weights: { kind: metadata.spindle_weights === 'full' ? 'full' : 'lora', tensors: [...tensors] },
    optimizer: decodeOptimizer(record.optimizer),
  };
}

/** The run's latest checkpoint with its replay buffer read back from the stored trajectories. */
export async function loadResumeCheckpoint(store: Store, runId: string): Promise<TrainerCheckpoint | undefined> {
  const record = await loadLatestCheckpoint(store, runId);
  if (!record) return undefined;
  const ids = replayTrajectoryIds(record);
  const found = await getTrajectories(store, ids);
  return decodeCheckpoint(record, new Map(found.flatMap((t) => (t ? [[t.id, t] as const] : []))));
}
