import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { CHECK_FIELDS, GRID_FIELDS, valueAt } from '../../src/ui/screens/train/form-fields.ts';

describe("the Train form's fields", () => {
  it('each names a setting of the run config, edited as its type', () => {
    const kinds = { text: 'string', select: 'string', number: 'number', checkbox: 'boolean' } as const;
    for (const f of [...GRID_FIELDS, ...CHECK_FIELDS]) {
      const value = valueAt(DEFAULT_CONFIG, f.path);
      expect(typeof value, f.path).toBe(kinds[f.kind ?? 'text']);
      if (f.kind === 'select') expect(f.options, f.path).toContain(value);
    }
  });

  it('lists each setting once', () => {
    const paths = [...GRID_FIELDS, ...CHECK_FIELDS].map((f) => f.path);
    expect(new Set(paths).size).toBe(paths.length);
  });
});
