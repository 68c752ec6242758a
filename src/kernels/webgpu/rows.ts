/**
 * Row programs: one workgroup per row of a [rows, cols] input, whose GROUP threads stride over the
 * columns and meet in a workgroup sum. RMSNorm and the softmax gradient are built on it.
 */
import { GROUP, GROUP_INDEX, WORKGROUP_SUM, program, type ProgramSpec } from './program.ts';

/**
 * `body` runs per thread with `row`, `cols`, `base` (the row's first element), `live` (false in the
 * padding groups of a reshaped dispatch), `tid` and `workgroupSum`; `shapeOf` names the input whose
 * uniform shape gives rows and columns.
 */
export function rowProgram(
  spec: Omit<ProgramSpec, 'groups' | 'code'> & { rows: number; shapeOf: string; body: string },
) {
  const shape = `uniforms.${spec.shapeOf[0].toLowerCase()}${spec.shapeOf.slice(1)}Shape`;
  return program({
    ...spec,
    groups: spec.rows,
    code: `
      ${GROUP_INDEX}
      ${WORKGROUP_SUM}
      fn main(index: i32) {
        let row = groupIndex();
        let cols = ${shape}[1];
        let live = row < ${shape}[0];
        let base = row * cols;
        let tid = i32(localId.x);
        ${spec.body}
      }
    `,
  });
}

/** WGSL: `for` over this thread's columns of the row (`c`), doing nothing in a padding workgroup. */
export function eachColumn(statements: string): string {
  return `for (var c = tid; c < cols; c = c + ${GROUP}) { if (live) { ${statements} } }`;
}
