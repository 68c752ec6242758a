/**
 * The universe's catalogue: the families the base model is built on, the families held out of the
 * build whole (the generalisation figure), and the worlds drawn from each.
 */
import type { Environment } from '../../../src/envs/types.ts';
import { deriveSeed } from '../../../src/rng.ts';
import { calendarFamily, inventoryFamily } from './held-out-families.ts';
import { catalogFamily, directoryFamily } from './lookup-families.ts';
import type { TemplateSet } from './roles.ts';
import { converterFamily, counterFamily, filesFamily, queueFamily } from './state-families.ts';
import { worldEnvironment, type Family, type Surface } from './world.ts';

export const BUILD_FAMILIES: Family<Surface>[] = [
  catalogFamily,
  directoryFamily,
  counterFamily,
  queueFamily,
  converterFamily,
  filesFamily,
] as Family<Surface>[];
export const HELD_OUT_FAMILIES: Family<Surface>[] = [inventoryFamily, calendarFamily] as Family<Surface>[];

/**
 * `count` worlds of a family. Build worlds and evaluation worlds draw their surfaces from different
 * seeds, so the tool names and descriptions a held-out figure is measured on were never trained on.
 */
export function worlds(
  family: Family<Surface>,
  count: number,
  purpose: 'build' | 'evaluate',
  templates: TemplateSet = 'build',
): Environment[] {
  return Array.from({ length: count }, (_, i) =>
    worldEnvironment(family, deriveSeed(purpose === 'build' ? 11 : 23, family.name, i) % 100000, templates),
  );
}
