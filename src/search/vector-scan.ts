/**
 * The exact vector scan of hybrid search: the dot product of the query with every row of a
 * segment, in a WebAssembly function with 128-bit SIMD when the rows live in a WebAssembly
 * memory (src/index/vector-memory.ts), else in JavaScript. Both compute the same float32
 * values bit for bit: four running float64 sums (dimensions i ≡ 0, 1, 2, 3 mod 4), each a
 * float64 multiplication then addition per dimension, added as `((s0 + s1) + s2) + s3` and
 * rounded to float32 once. The SIMD function holds (s0, s1) and (s2, s3) in two f64x2
 * registers, so each lane performs the scalar sequence exactly; only the speed differs (about
 * 5× at 100 dimensions: 100,000 rows in ~4 ms instead of ~20 ms).
 *
 * The similarities are written to scratch space owned by the segment's vectors (no per-query
 * allocation of a row-sized array): valid until the next scan of the same segment in this
 * thread, which is after the query that asked for them (a search thread runs one query at a
 * time, synchronously).
 */
import type { SegmentVectors } from '../index/index.js';

// Hand-assembled module (WebAssembly binary format, SIMD proposal opcodes), equivalent to:
//
// (module (import "e" "m" (memory 1))
//   (func (export "dots") (param $data i32) (param $q i32) (param $out i32) (param $n i32) (param $dims i32)
//     (local $p i32) (local $qi i32) (local $rowEnd i32) (local $outEnd i32) (local $a v128) (local $b v128)
//     p = data; outEnd = out + n*4
//     if (out < outEnd) loop:
//       a = b = 0; qi = q; rowEnd = p + dims*4
//       loop: a += promote(load64_zero(p)) * load(qi); b += promote(load64_zero(p+8)) * load(qi+16)
//             qi += 32; p += 16; br_if (p < rowEnd)
//       f32.store(out, demote(((a[0] + a[1]) + b[0]) + b[1])); out += 4; br_if (out < outEnd)
const I32 = 0x7f;
const V128 = 0x7b;
const uleb = (n: number): number[] => {
  const o: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    o.push(b);
  } while (n);
  return o;
};
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const name = (s: string): number[] => [...uleb(s.length), ...[...s].map((c) => c.charCodeAt(0))];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const get = (i: number) => [0x20, i];
const set = (i: number) => [0x21, i];
const tee = (i: number) => [0x22, i];
const i32c = (v: number) => [0x41, ...uleb(v)]; // small non-negative constants (< 64) only
const simd = (op: number) => [0xfd, ...uleb(op)];
const [DATA, Q, OUT, N, DIMS, P, QI, ROW_END, OUT_END, A, B] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const I32_ADD = 0x6a, I32_SHL = 0x74, I32_LT_U = 0x49, F64_ADD = 0xa0, F32_DEMOTE_F64 = 0xb6, F32_STORE = 0x38;
const LOOP = [0x03, 0x40], IF = [0x04, 0x40], END = 0x0b, BR_IF0 = [0x0d, 0x00];
const V128_LOAD = 0x00, V128_CONST = 0x0c, F64X2_EXTRACT = 0x21, V128_LOAD64_ZERO = 0x5d, F64X2_PROMOTE_LOW = 0x5f, F64X2_ADD = 0xf0, F64X2_MUL = 0xf2;
/** acc += promote(low two float32 at p + off) × (two float64 at qi + 2·off) */
const step = (acc: number, off: number) => [
  ...get(acc), ...get(P), ...simd(V128_LOAD64_ZERO), 0x03, off, ...simd(F64X2_PROMOTE_LOW),
  ...get(QI), ...simd(V128_LOAD), 0x04, off * 2, ...simd(F64X2_MUL), ...simd(F64X2_ADD), ...set(acc),
];
const body = [
  ...get(DATA), ...set(P),
  ...get(OUT), ...get(N), ...i32c(2), I32_SHL, I32_ADD, ...set(OUT_END),
  ...get(OUT), ...get(OUT_END), I32_LT_U, ...IF,
  ...LOOP,
  ...simd(V128_CONST), ...new Array<number>(16).fill(0), ...tee(A), ...set(B),
  ...get(Q), ...set(QI),
  ...get(P), ...get(DIMS), ...i32c(2), I32_SHL, I32_ADD, ...set(ROW_END),
  ...LOOP,
  ...step(A, 0), ...step(B, 8),
  ...get(QI), ...i32c(32), I32_ADD, ...set(QI),
  ...get(P), ...i32c(16), I32_ADD, ...tee(P), ...get(ROW_END), I32_LT_U, ...BR_IF0,
  END,
  ...get(OUT),
  ...get(A), ...simd(F64X2_EXTRACT), 0, ...get(A), ...simd(F64X2_EXTRACT), 1, F64_ADD,
  ...get(B), ...simd(F64X2_EXTRACT), 0, F64_ADD, ...get(B), ...simd(F64X2_EXTRACT), 1, F64_ADD,
  F32_DEMOTE_F64, F32_STORE, 0x02, 0x00,
  ...get(OUT), ...i32c(4), I32_ADD, ...tee(OUT), ...get(OUT_END), I32_LT_U, ...BR_IF0,
  END,
  END,
  END,
];
const func = [0x02, 0x04, I32, 0x02, V128, ...body]; // locals: 4 × i32, 2 × v128
const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0x00]])),
  ...section(2, vec([[...name('e'), ...name('m'), 0x02, 0x00, 0x00]])),
  ...section(3, vec([[0x00]])),
  ...section(7, vec([[...name('dots'), 0x00, 0x00]])),
  ...section(10, vec([[...uleb(func.length), ...func]])),
]);

type Dots = (data: number, q: number, out: number, n: number, dims: number) => void;

/** The compiled module, or null where WebAssembly SIMD is unavailable (the JavaScript scan then). */
let compiled: WebAssembly.Module | null | undefined;
function wasmModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      compiled = typeof WebAssembly === 'object' && WebAssembly.validate(MODULE) ? new WebAssembly.Module(MODULE) : null;
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

/** Per segment vectors: the instance bound to their memory and views of the scratch space, or the JavaScript output array. */
interface ScanState {
  dots: Dots | null;
  q: Float64Array | null;
  out: Float32Array;
}
const states = new WeakMap<SegmentVectors, ScanState>();

function stateOf(vs: SegmentVectors, rows: number): ScanState {
  let st = states.get(vs);
  if (st && st.out.length === rows) return st;
  const mod = vs.memory ? wasmModule() : null;
  if (mod && vs.memory) {
    const inst = new WebAssembly.Instance(mod, { e: { m: vs.memory } });
    const buf = vs.memory.buffer;
    st = { dots: inst.exports.dots as Dots, q: new Float64Array(buf, vs.scratch, vs.dims), out: new Float32Array(buf, vs.scratch + vs.dims * 8, rows) };
  } else {
    st = { dots: null, q: null, out: new Float32Array(rows) };
  }
  states.set(vs, st);
  return st;
}

/**
 * The dot product of `query` (length `vs.dims`) with each of the first `rows` rows of `vs`,
 * as float32, in an array owned by `vs` (overwritten by the next call for `vs`). Rows without
 * a vector hold zeros, so their product is 0: callers mask them.
 *
 * @example
 * const sims = rowDots(seg.reader.vectors(fp)!, queryVector, seg.dead.length);
 */
export function rowDots(vs: SegmentVectors, query: Float32Array, rows: number): Float32Array {
  const st = stateOf(vs, rows);
  const dims = vs.dims;
  if (st.dots && st.q) {
    for (let i = 0; i < dims; i++) st.q[i] = query[i]!;
    st.dots(0, vs.scratch, vs.scratch + dims * 8, rows, dims);
    return st.out;
  }
  jsDots(vs.data, Float64Array.from(query), dims, rows, st.out);
  return st.out;
}

/** Whether `vs` is scanned by the SIMD function (tests: both paths must agree). */
export function scansWithSimd(vs: SegmentVectors): boolean {
  return vs.memory !== null && wasmModule() !== null;
}

/** The JavaScript scan: the same four sums in the same order as the SIMD function. */
export function jsDots(data: Float32Array, qd: Float64Array, dims: number, rows: number, out: Float32Array): void {
  const whole = dims - (dims % 4);
  for (let id = 0; id < rows; id++) {
    // Four independent sums: one running sum waits on each addition's latency.
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    const base = id * dims;
    let i = 0;
    for (; i < whole; i += 4) {
      s0 += data[base + i]! * qd[i]!;
      s1 += data[base + i + 1]! * qd[i + 1]!;
      s2 += data[base + i + 2]! * qd[i + 2]!;
      s3 += data[base + i + 3]! * qd[i + 3]!;
    }
    for (; i < dims; i++) s0 += data[base + i]! * qd[i]!;
    out[id] = s0 + s1 + s2 + s3;
  }
}
