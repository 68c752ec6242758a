/**
 * The judge model's ONNX graph: a bag-of-embeddings sequence classifier (fastText-like) with one hidden
 * layer, in the interface of a Hugging Face sequence-classification reward model:
 *   input_ids [batch, seq] int64, attention_mask [batch, seq] int64 → logits [batch, 1] float
 * The reward is sigmoid(logits). The same forward pass is written in plain TypeScript in train.ts.
 */
import { DataType, writeOnnxModel, type NodeSpec } from './onnx-writer.ts';

export interface JudgeWeights {
  vocab: number;
  dim: number;
  hidden: number;
  /** [vocab, dim] row-major. */
  embed: Float32Array;
  /** [dim, hidden] row-major. */
  w1: Float32Array;
  b1: Float32Array;
  /** [hidden, 1]. */
  w2: Float32Array;
  b2: Float32Array;
}

export function buildJudgeOnnx(w: JudgeWeights, metadata: Record<string, string>): Uint8Array {
  const nodes: NodeSpec[] = [
    { op: 'Gather', inputs: ['embed', 'input_ids'], outputs: ['tok_emb'], attrs: { axis: 0 } }, // [B, T, D]
    { op: 'Cast', inputs: ['attention_mask'], outputs: ['mask_f'], attrs: { to: DataType.FLOAT } }, // [B, T]
    { op: 'Unsqueeze', inputs: ['mask_f', 'axis_2'], outputs: ['mask_3'] }, // [B, T, 1]
    { op: 'Mul', inputs: ['tok_emb', 'mask_3'], outputs: ['masked'] }, // [B, T, D]
    { op: 'ReduceSum', inputs: ['masked', 'axis_1'], outputs: ['summed'], attrs: { keepdims: 0 } }, // [B, D]
    { op: 'ReduceSum', inputs: ['mask_f', 'axis_1'], outputs: ['count'], attrs: { keepdims: 1 } }, // [B, 1]
    { op: 'Max', inputs: ['count', 'one'], outputs: ['count_safe'] }, // [B, 1], empty input → divide by 1
    { op: 'Div', inputs: ['summed', 'count_safe'], outputs: ['pooled'] }, // [B, D]
    { op: 'MatMul', inputs: ['pooled', 'w1'], outputs: ['h_lin'] }, // [B, H]
    { op: 'Add', inputs: ['h_lin', 'b1'], outputs: ['h_pre'] }, // [B, H]
    { op: 'Relu', inputs: ['h_pre'], outputs: ['hidden'] }, // [B, H]
    { op: 'MatMul', inputs: ['hidden', 'w2'], outputs: ['z_lin'] }, // [B, 1]
    { op: 'Add', inputs: ['z_lin', 'b2'], outputs: ['logits'] }, // [B, 1]
  ];
  return writeOnnxModel({
    name: 'spindle_judge',
    producer: 'spindle scripts/build-judge-model.ts',
    opset: 13,
    nodes,
    initializers: [
      { name: 'embed', dims: [w.vocab, w.dim], dataType: DataType.FLOAT, values: w.embed },
      { name: 'w1', dims: [w.dim, w.hidden], dataType: DataType.FLOAT, values: w.w1 },
      { name: 'b1', dims: [w.hidden], dataType: DataType.FLOAT, values: w.b1 },
      { name: 'w2', dims: [w.hidden, 1], dataType: DataType.FLOAT, values: w.w2 },
      { name: 'b2', dims: [1], dataType: DataType.FLOAT, values: w.b2 },
      { name: 'axis_1', dims: [1], dataType: DataType.INT64, values: [1] },
      { name: 'axis_2', dims: [1], dataType: DataType.INT64, values: [2] },
      { name: 'one', dims: [], dataType: DataType.FLOAT, values: [1] },
    ],
    inputs: [
      { name: 'input_ids', dataType: DataType.INT64, shape: ['batch', 'sequence'] },
      { name: 'attention_mask', dataType: DataType.INT64, shape: ['batch', 'sequence'] },
    ],
    outputs: [{ name: 'logits', dataType: DataType.FLOAT, shape: ['batch', 1] }],
    metadata,
  });
}
