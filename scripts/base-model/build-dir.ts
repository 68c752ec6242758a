/**
 * Where the base-model build keeps its stages' outputs and checkpoints: outside the repository (a
 * build's data and checkpoints are large and are not committed), in SPINDLE_BUILD_DIR or
 * ~/.cache/spindle/base-build. Only the finished model is copied into models/spindle-base.
 */
import os from 'node:os';
import { join } from 'node:path';

export function buildDir(): string {
  return process.env.SPINDLE_BUILD_DIR ?? join(os.homedir(), '.cache', 'spindle', 'base-build');
}
