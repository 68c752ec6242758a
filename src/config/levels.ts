import type { RunConfig } from './schema.ts';

/** The level an environment trains at while the curriculum is off, and is evaluated at: `tasks.levels`, else the range's low end. */
export function fixedLevel(tasks: RunConfig['tasks'], env: string): number {
  return tasks.levels[env] ?? tasks.difficulty_range[0];
}
