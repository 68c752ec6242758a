/**
 * A minimal WebAssembly binary writer: just what the kernels in this folder need (i32 arithmetic,
 * structured control flow, f32 and 128-bit SIMD loads, stores and arithmetic) and a module of
 * exported functions over one imported memory. Writing the kernels in TypeScript keeps them readable
 * and reviewable, with no toolchain and no opaque binary in the repository.
 *
 * Encoding reference: the WebAssembly core specification §5 (binary format) and the SIMD proposal's
 * opcode table (every SIMD instruction is 0xfd followed by its LEB128 opcode).
 */

/** Unsigned LEB128. */
function uleb(value: number): number[] {
  const out: number[] = [];
  let v = value >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
  return out;
}

/** Signed LEB128 of a 32-bit integer. */
function sleb(value: number): number[] {
  const out: number[] = [];
  let v = value | 0;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    const done = (v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

const TYPE_CODES = { i32: 0x7f, f32: 0x7d, v128: 0x7b } as const;
export type ValueType = keyof typeof TYPE_CODES;

/** Alignment exponents of the memory instructions' memargs (a hint only: wasm tolerates misalignment). */
const ALIGN_F32 = 2;
const ALIGN_V128 = 4;

/**
 * The body of one function: locals are declared with `local()`, instructions appended in order.
 * Method names follow the text format (`i32_add` for `i32.add`).
 */
export class FunctionBody {
  readonly params: readonly ValueType[];
  private readonly locals: ValueType[] = [];
  private readonly code: number[] = [];

  constructor(params: readonly ValueType[]) {
    this.params = params;
  }

  /** A new local of type `t`; returns its index. Parameters are locals 0 … params-1. */
  local(t: ValueType): number {
    this.locals.push(t);
    return this.params.length + this.locals.length - 1;
  }

  private emit(...bytes: number[]): this {
    this.code.push(...bytes);
    return this;
  }
  private simd(opcode: number, ...rest: number[]): this {
    return this.emit(0xfd, ...uleb(opcode), ...rest);
  }

  get(i: number) { return this.emit(0x20, ...uleb(i)); } // prettier-ignore
  set(i: number) { return this.emit(0x21, ...uleb(i)); } // prettier-ignore
  tee(i: number) { return this.emit(0x22, ...uleb(i)); } // prettier-ignore
  i32_const(v: number) { return this.emit(0x41, ...sleb(v)); } // prettier-ignore
  i32_add() { return this.emit(0x6a); } // prettier-ignore
  i32_sub() { return this.emit(0x6b); } // prettier-ignore
  i32_mul() { return this.emit(0x6c); } // prettier-ignore
  i32_lt_u() { return this.emit(0x49); } // prettier-ignore
  i32_ge_u() { return this.emit(0x4f); } // prettier-ignore
  i32_div_u() { return this.emit(0x6e); } // prettier-ignore
  i32_rem_u() { return this.emit(0x70); } // prettier-ignore
  /** `block` with no result; `end()` closes it. A branch to it jumps past its end. */
  block() { return this.emit(0x02, 0x40); } // prettier-ignore
  /** `loop` with no result; a branch to it jumps back to its start. */
  loop() { return this.emit(0x03, 0x40); } // prettier-ignore
  end() { return this.emit(0x0b); } // prettier-ignore
  br(depth: number) { return this.emit(0x0c, ...uleb(depth)); } // prettier-ignore
  br_if(depth: number) { return this.emit(0x0d, ...uleb(depth)); } // prettier-ignore
  /** Branches to depths[i32 on the stack], or to `fallback` when it is out of range. */
  br_table(depths: number[], fallback: number) { return this.emit(0x0e, ...uleb(depths.length), ...depths.flatMap(uleb), ...uleb(fallback)); } // prettier-ignore
  return_() { return this.emit(0x0f); } // prettier-ignore
  f32_load(offset = 0) { return this.emit(0x2a, ALIGN_F32, ...uleb(offset)); } // prettier-ignore
  f32_store(offset = 0) { return this.emit(0x38, ALIGN_F32, ...uleb(offset)); } // prettier-ignore
  f32_add() { return this.emit(0x92); } // prettier-ignore
  f32_sub() { return this.emit(0x93); } // prettier-ignore
  f32_mul() { return this.emit(0x94); } // prettier-ignore
  f32_div() { return this.emit(0x95); } // prettier-ignore
  f32_sqrt() { return this.emit(0x91); } // prettier-ignore
  f32_const(v: number) { return this.emit(0x43, ...new Uint8Array(Float32Array.of(v).buffer)); } // prettier-ignore
  f32_convert_i32_u() { return this.emit(0xb3); } // prettier-ignore
  v128_load(offset = 0) { return this.simd(0x00, ALIGN_V128, ...uleb(offset)); } // prettier-ignore
  v128_load32_splat(offset = 0) { return this.simd(0x09, ALIGN_F32, ...uleb(offset)); } // prettier-ignore
  v128_store(offset = 0) { return this.simd(0x0b, ALIGN_V128, ...uleb(offset)); } // prettier-ignore
  v128_const0() { return this.simd(0x0c, ...new Array<number>(16).fill(0)); } // prettier-ignore
  /** A vector of four copies of the float32 v. */
  f32x4_const(v: number) { return this.simd(0x0c, ...Array.from({ length: 4 }, () => [...new Uint8Array(Float32Array.of(v).buffer)]).flat()); } // prettier-ignore
  f32x4_splat() { return this.simd(0x13); } // prettier-ignore
  f32x4_extract_lane(lane: number) { return this.simd(0x1f, lane); } // prettier-ignore
  f32x4_add() { return this.simd(0xe4); } // prettier-ignore
  f32x4_sub() { return this.simd(0xe5); } // prettier-ignore
  f32x4_mul() { return this.simd(0xe6); } // prettier-ignore
  f32x4_div() { return this.simd(0xe7); } // prettier-ignore
  f32x4_sqrt() { return this.simd(0xe3); } // prettier-ignore
  f32x4_min() { return this.simd(0xe8); } // prettier-ignore
  f32x4_max() { return this.simd(0xe9); } // prettier-ignore
  /** Pseudo-minimum b < a ? b : a: one instruction on x86, where f32x4.min's NaN and −0 rules cost several. */
  f32x4_pmin() { return this.simd(0xea); } // prettier-ignore
  /** Pseudo-maximum a < b ? b : a (see f32x4_pmin). */
  f32x4_pmax() { return this.simd(0xeb); } // prettier-ignore
  f32x4_nearest() { return this.simd(0x6a); } // prettier-ignore
  i32x4_trunc_sat_f32x4_s() { return this.simd(0xf8); } // prettier-ignore
  i32x4_add() { return this.simd(0xae); } // prettier-ignore
  i32x4_sub() { return this.simd(0xb1); } // prettier-ignore
  i32x4_shl() { return this.simd(0xab); } // prettier-ignore
  i32x4_splat() { return this.simd(0x11); } // prettier-ignore
  f32_max() { return this.emit(0x97); } // prettier-ignore
  /** Relaxed SIMD's a·b + c (fused or not, as the hardware does it); operands pushed a, b, c. */
  f32x4_relaxed_madd() { return this.simd(0x105); } // prettier-ignore

  /** The body's encoding: local declarations (one group per local), code, `end`. */
  encode(): number[] {
    const decls = this.locals.flatMap((t) => [1, TYPE_CODES[t]]);
    const body = [...uleb(this.locals.length), ...decls, ...this.code, 0x0b];
    return [...uleb(body.length), ...body];
  }
}

/** `for (x = from; x < limit; x += step) body()`, tested at the top (the body may run zero times). */
export function forRange(
  f: FunctionBody,
  x: number,
  from: () => void,
  limit: () => void,
  step: number,
  body: () => void,
): void {
  from();
  f.set(x);
  f.block().loop();
  f.get(x);
  limit();
  f.i32_ge_u().br_if(1);
  body();
  f.get(x).i32_const(step).i32_add().set(x).br(0);
  f.end().end();
}

/** The four f32 lanes of the v128 local `vector` folded in order by `op` (f32.add, f32.max), ((l0 op l1) op l2) op l3, left on the stack. */
export function emitLaneReduce(f: FunctionBody, vector: number, op: () => void): void {
  f.get(vector).f32x4_extract_lane(0);
  for (let lane = 1; lane < 4; lane++) {
    f.get(vector).f32x4_extract_lane(lane);
    op();
  }
}

/** An exported function with no result; its parameters are its body's. */
export interface ExportedFunction {
  name: string;
  body: FunctionBody;
}

function section(id: number, content: number[]): number[] {
  return [id, ...uleb(content.length), ...content];
}

const utf8 = (s: string) => [...new TextEncoder().encode(s)];
const name = (s: string) => [...uleb(utf8(s).length), ...utf8(s)];

/**
 * A module importing `env.memory` and exporting `functions`. A shared memory (a threaded tfjs-wasm
 * build's heap) must be imported as shared, with a maximum: 65,536 pages, wasm32's whole range,
 * admits any heap.
 */
export function assembleModule(functions: ExportedFunction[], sharedMemory: boolean): Uint8Array {
  const types = functions.flatMap((f) => [
    0x60,
    ...uleb(f.body.params.length),
    ...f.body.params.map((t) => TYPE_CODES[t]),
    0,
  ]);
  const memoryLimits = sharedMemory ? [0x03, ...uleb(0), ...uleb(65536)] : [0x00, ...uleb(0)];
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [...uleb(functions.length), ...types]),
    ...section(2, [...uleb(1), ...name('env'), ...name('memory'), 0x02, ...memoryLimits]),
    ...section(3, [...uleb(functions.length), ...functions.flatMap((_, i) => uleb(i))]),
    ...section(7, [...uleb(functions.length), ...functions.flatMap((f, i) => [...name(f.name), 0x00, ...uleb(i)])]),
    ...section(10, [...uleb(functions.length), ...functions.flatMap((f) => f.body.encode())]),
  ]; // prettier-ignore
  return new Uint8Array(bytes);
}
