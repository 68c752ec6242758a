/**
 * TrainerCheckpoint ⇄ the store's checkpoint record. The trainable weights go in as a safetensors file
 * with PEFT key names (so the latest checkpoint of a LoRA run is also its exportable adapter), the
 * optimizer moments as a second safetensors file, and everything else (replay buffer, curriculum, RNG,
 * safety state, rollback point) as structured-clone data in `meta`.
 */
import type { CheckpointInput } from '../store/checkpoints.ts';
import type { CheckpointRecord } from '../store/records.ts';
import type { TrainerCheckpoint } from '../train/checkpoint.ts';
import type { OptimizerState } from '../train/optimizer.ts';
import { readSafetensors, writeSafetensors } from '../model/safetensors.ts';
import type { HostTensors } from '../model/transformer.ts';

const toBuffer = (bytes: Uint8Array): ArrayBuffer => bytes.slice().buffer as ArrayBuffer;

function encodeOptimizer(state: OptimizerState): ArrayBuffer {
  const tensors: HostTensors = new Map();
  state.m.forEach((m, i) => tensors.set(`m.${i}`, { shape: [m.length], data: m }));
  state.v.forEach((v, i) => tensors.set(`v.${i}`, { shape: [v.length], data: v }));
  state.pending?.forEach((p, i) => tensors.set(`pending.${i}`, { shape: [p.length], data: p }));
  return toBuffer(writeSafetensors(tensors, { step: String(state.step), pending_count: String(state.pendingCount), variables: String(state.m.length) }));
}

function decodeOptimizer(buffer: ArrayBuffer): OptimizerState {
  const { tensors, metadata } = readSafetensors(new Uint8Array(buffer), 'optimizer state');
  const n = Number(metadata.variables);
  const read = (prefix: string) => Array.from({ length: n }, (_, i) => {
    const t = tensors.get(`${prefix}.${i}`);
    if (!t) throw new Error(`optimizer state: tensor ${prefix}.${i} is missing`);
    return t.data;
  });
  return { step: Number(metadata.step), m: read('m'), v: read('v'), pending: tensors.has('pending.0') ? read('pending') : null, pendingCount: Number(metadata.pending_count) };
}

export function encodeCheckpoint(ckpt: TrainerCheckpoint): CheckpointInput {
  const { weights, optimizer, ...rest } = ckpt;
  const adapter = toBuffer(writeSafetensors(new Map(weights.tensors), { format: 'pt', spindle_weights: weights.kind }));
  return { run_id: ckpt.run_id, step: ckpt.step, adapter, optimizer: encodeOptimizer(optimizer), meta: { checkpoint: rest } };
}

export function decodeCheckpoint(record: CheckpointRecord): TrainerCheckpoint {
  const rest = record.meta.checkpoint as Omit<TrainerCheckpoint, 'weights' | 'optimizer'> | undefined;
  if (!rest || !record.optimizer) throw new Error(`checkpoint ${record.id} was not written by the trainer (no trainer state in it); it cannot resume a run`);
  const { tensors, metadata } = readSafetensors(new Uint8Array(record.adapter), `checkpoint ${record.id}`);
  return { ...rest, weights: { kind: metadata.spindle_weights === 'full' ? 'full' : 'lora', tensors: [...tensors] }, optimizer: decodeOptimizer(record.optimizer) };
}
