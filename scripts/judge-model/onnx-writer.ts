/**
 * A minimal ONNX ModelProto writer: just the protobuf fields a small feed-forward graph needs (nodes
 * with int/ints attributes, float and int64 initializers, typed inputs and outputs with symbolic dims).
 * Field numbers follow onnx/onnx.proto. Used by the judge model build script so the project needs no
 * Python to rebuild its shipped model.
 */

/** Protobuf wire encoding: varints and length-delimited fields into a growing byte list. */
class ProtoWriter {
  private readonly bytes: number[] = [];

  private varint(value: bigint | number): void {
    // Negative int64 values are written as 10-byte two's complement, as protobuf requires.
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) {
      this.bytes.push(Number((v & 0x7fn) | 0x80n));
      v >>= 7n;
    }
    this.bytes.push(Number(v));
  }

  private tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  int(field: number, value: number | bigint): this {
    this.tag(field, 0);
    this.varint(value);
    return this;
  }

  bytesField(field: number, data: Uint8Array): this {
    this.tag(field, 2);
    this.varint(data.length);
    for (const b of data) this.bytes.push(b);
    return this;
  }

  string(field: number, text: string): this {
    return this.bytesField(field, new TextEncoder().encode(text));
  }

  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytesField(field, inner.finish());
  }

  packedInts(field: number, values: readonly number[]): this {
    const inner = new ProtoWriter();
    for (const v of values) inner.varint(v);
    return this.bytesField(field, inner.finish());
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

export const DataType = { FLOAT: 1, INT64: 7 } as const;

export interface TensorInit {
  name: string;
  dims: number[];
  dataType: (typeof DataType)[keyof typeof DataType];
  /** Float32 values (FLOAT) or integers (INT64). */
  values: Float32Array | number[];
}

export interface NodeSpec {
  op: string;
  inputs: string[];
  outputs: string[];
  name?: string;
  /** Integer and integer-list attributes (all this graph needs). */
  attrs?: Record<string, number | number[]>;
}

export interface ValueSpec {
  name: string;
  dataType: number;
  /** A number is a fixed size, a string a symbolic one ("batch"). */
  shape: (number | string)[];
}

export interface GraphSpec {
  name: string;
  nodes: NodeSpec[];
  initializers: TensorInit[];
  inputs: ValueSpec[];
  outputs: ValueSpec[];
  opset: number;
  producer: string;
  /** Key/value strings stored as the model's metadata_props. */
  metadata?: Record<string, string>;
}

const AttrType = { INT: 2, INTS: 7 } as const;

function writeTensor(w: ProtoWriter, t: TensorInit): void {
  w.packedInts(1, t.dims).int(2, t.dataType).string(8, t.name);
  if (t.dataType === DataType.FLOAT) {
    const f = t.values instanceof Float32Array ? t.values : Float32Array.from(t.values);
    // raw_data is little-endian; Float32Array is platform-endian, and every platform we run on is little-endian.
    w.bytesField(9, new Uint8Array(f.buffer, f.byteOffset, f.byteLength));
  } else {
    const buf = new BigInt64Array(Array.from(t.values, (v) => BigInt(v)));
    w.bytesField(9, new Uint8Array(buf.buffer));
  }
}

function writeValueInfo(w: ProtoWriter, v: ValueSpec): void {
  w.string(1, v.name).message(2, (type) =>
    type.message(1, (tensor) =>
      tensor.int(1, v.dataType).message(2, (shape) => {
        for (const d of v.shape) shape.message(1, (dim) => (typeof d === 'number' ? dim.int(1, d) : dim.string(2, d)));
      }),
    ),
  );
}

function writeNode(w: ProtoWriter, n: NodeSpec): void {
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  if (n.name) w.string(3, n.name);
  w.string(4, n.op);
  for (const [name, value] of Object.entries(n.attrs ?? {})) {
    w.message(5, (a) => {
      a.string(1, name);
      if (Array.isArray(value)) {
        for (const v of value) a.int(8, v);
        a.int(20, AttrType.INTS);
      } else a.int(3, value).int(20, AttrType.INT);
    });
  }
}

/** Serialises the graph as an ONNX model file (IR version 8). */
export function writeOnnxModel(spec: GraphSpec): Uint8Array {
  const w = new ProtoWriter();
  w.int(1, 8).string(2, spec.producer).string(3, '0.1.0');
  w.message(7, (g) => {
    for (const n of spec.nodes) g.message(1, (node) => writeNode(node, n));
    g.string(2, spec.name);
    for (const t of spec.initializers) g.message(5, (tensor) => writeTensor(tensor, t));
    for (const v of spec.inputs) g.message(11, (vi) => writeValueInfo(vi, v));
    for (const v of spec.outputs) g.message(12, (vi) => writeValueInfo(vi, v));
  });
  w.message(8, (op) => op.string(1, '').int(2, spec.opset));
  for (const [key, value] of Object.entries(spec.metadata ?? {}))
    w.message(14, (m) => m.string(1, key).string(2, value));
  return w.finish();
}
