/**
 * One description per GPU record, from which both sides are generated: the WGSL struct text and the
 * byte offsets and stride the host packs with. TS and WGSL cannot disagree on a record's layout,
 * because neither is written by hand.
 *
 * WGSL's layout rules (WGSL spec §"Memory layout", alignment and size of host-shareable types):
 *   type      align  size          type      align  size
 *   f32/u32/i32  4     4           vec3<T>     16    12
 *   vec2<T>      8     8           vec4<T>     16    16
 * a member sits at the next multiple of its alignment after the previous member's end; a struct's
 * alignment is its largest member alignment, its size the end of its last member rounded up to that
 * alignment; an array's element stride is roundUp(align, size) of the element (= the struct size).
 * A uniform buffer's struct obeys the same rules for these member types (no arrays, no nested
 * structs here), so one description serves storage and uniform records alike.
 *
 * Invariants: `offsets[f]` and `stride` are exactly what a WGSL compiler gives the struct `wgsl`
 * declares (test/gpu-plumbing.test.ts round-trips records through a kernel to check it).
 */

export type ScalarKind = 'f32' | 'u32' | 'i32';
export type FieldType = ScalarKind | `vec${2 | 3 | 4}${'f' | 'u' | 'i'}`;

const SUFFIX: Record<'f' | 'u' | 'i', ScalarKind> = { f: 'f32', u: 'u32', i: 'i32' };

/** WGSL (align, size, components, scalar kind) of a field type. */
function typeInfo(t: FieldType): { align: number; size: number; components: number; scalar: ScalarKind } {
  if (t === 'f32' || t === 'u32' || t === 'i32') return { align: 4, size: 4, components: 1, scalar: t };
  const n = Number(t[3]) as 2 | 3 | 4;
  const scalar = SUFFIX[t[4] as 'f' | 'u' | 'i'];
  return { align: n === 2 ? 8 : 16, size: 4 * n, components: n, scalar };
}

export interface RecordLayout<F extends string> {
  /** the WGSL struct's name */
  readonly name: string;
  /** bytes from one record to the next in an array (a multiple of `align`) */
  readonly stride: number;
  readonly align: number;
  /** byte offset of each field within a record */
  readonly offsets: Readonly<Record<F, number>>;
  readonly types: Readonly<Record<F, FieldType>>;
  /** `struct Name { … }` for WGSL */
  readonly wgsl: string;
  /** writes field `field` of record `index` (components from `values`, as many as the type has) */
  write(view: DataView, index: number, field: F, ...values: number[]): void;
  /** reads field `field` of record `index` (its components) */
  read(view: DataView, index: number, field: F): number[];
}

/**
 * The layout of WGSL struct `name` with `fields` in order ([field name, type]); comments, when
 * given, are written beside each member of the WGSL text.
 */
export function defineRecord<F extends string>(name: string, fields: readonly (readonly [F, FieldType, string?])[]): RecordLayout<F> {
  let offset = 0, align = 4;
  const offsets = {} as Record<F, number>;
  const types = {} as Record<F, FieldType>;
  const lines: string[] = [];
  for (const [field, type, comment] of fields) {
    const info = typeInfo(type);
    offset = Math.ceil(offset / info.align) * info.align;
    offsets[field] = offset;
    types[field] = type;
    offset += info.size;
    align = Math.max(align, info.align);
    lines.push(`  ${field}: ${type},${comment ? ` // ${comment}` : ''}`);
  }
  const stride = Math.ceil(offset / align) * align;
  const wgsl = `struct ${name} { // ${stride} bytes (gpu/layout.ts)\n${lines.join('\n')}\n};\n`;
  const accessor = (field: F) => {
    const info = typeInfo(types[field]);
    return { o: offsets[field], n: info.components, s: info.scalar };
  };
  return {
    name,
    stride,
    align,
    offsets,
    types,
    wgsl,
    write(view, index, field, ...values) {
      const { o, n, s } = accessor(field);
      const base = index * stride + o;
      for (let c = 0; c < n; c++) {
        const v = values[c] ?? 0;
        if (s === 'f32') view.setFloat32(base + 4 * c, v, true);
        else if (s === 'u32') view.setUint32(base + 4 * c, v >>> 0, true);
        else view.setInt32(base + 4 * c, v | 0, true);
      }
    },
    read(view, index, field) {
      const { o, n, s } = accessor(field);
      const base = index * stride + o;
      const out: number[] = [];
      for (let c = 0; c < n; c++) out.push(s === 'f32' ? view.getFloat32(base + 4 * c, true) : s === 'u32' ? view.getUint32(base + 4 * c, true) : view.getInt32(base + 4 * c, true));
      return out;
    },
  };
}

/** Offsets of uniform records of one buffer bound at different offsets: multiples of this (WebGPU's default minUniformBufferOffsetAlignment). */
export const UNIFORM_OFFSET_ALIGNMENT = 256;
