/**
 * Where a segment's row vectors live in a search thread: a large segment's rows in a
 * WebAssembly memory of their own, so that the vector scan of hybrid search (src/search/
 * vector-scan.ts) reads them in place with SIMD instructions; a small segment's in a plain
 * Float32Array (its scan takes microseconds either way).
 *
 * Layout of a memory block: the rows (`rows × dims` float32 from byte 0), then from byte
 * `scratch` (16-aligned) `dims × 8 + rows × 4` bytes the scan owns: the query in float64 and
 * one float32 similarity per row.
 */

/** Tunables of {@link allocRowVectors} (tests lower `minBytes` to put small segments in a block). */
export const vectorMemoryOptions = {
  /**
   * Least size of the rows (bytes) kept in a WebAssembly memory. Each memory reserves address
   * space (guard regions on 64-bit), so small segments, whose scan costs little, stay plain.
   */
  minBytes: 1 << 20,
};

/** A segment's row vectors: `data` holds row `id` at `data[id * dims]`. */
export interface RowVectorBlock {
  data: Float32Array;
  /** The memory holding `data` at byte 0, or null (plain array: scanned in JavaScript). */
  memory: WebAssembly.Memory | null;
  /** Byte offset of the scan's scratch space in `memory` (0 when `memory` is null). */
  scratch: number;
}

const PAGE = 65536;

/**
 * Zeroed room for `rows` vectors of `dims` float32: in a WebAssembly memory when `dims` is a
 * multiple of 4 and the rows take at least {@link vectorMemoryOptions}.minBytes, else (or when
 * the memory cannot be reserved) a plain Float32Array.
 *
 * @example
 * const block = allocRowVectors(100_000, 100); // block.memory !== null: 40 MB + 0.4 MB scratch
 */
export function allocRowVectors(rows: number, dims: number): RowVectorBlock {
  const bytes = rows * dims * 4;
  if (dims > 0 && dims % 4 === 0 && bytes >= vectorMemoryOptions.minBytes && typeof WebAssembly === 'object') {
    const scratch = Math.ceil(bytes / 16) * 16;
    const pages = Math.ceil((scratch + dims * 8 + rows * 4) / PAGE);
    try {
      const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
      return { data: new Float32Array(memory.buffer, 0, rows * dims), memory, scratch };
    } catch {
      // Address space exhausted (many open segments, a ulimit): the plain array is scanned in JavaScript.
    }
  }
  return { data: new Float32Array(rows * dims), memory: null, scratch: 0 };
}
