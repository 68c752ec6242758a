import { describe, expect, it } from 'vitest';
import {
  parseSkill,
  renderSkill,
  skillsFromTrajectories,
  skillsToInstructions,
  mergeJsonl,
  skillBody,
  skillExamples,
} from '../../src/export/skills.ts';
import { ImportError } from '../../src/export/import-error.ts';
import { makeTrajectory } from '../store/fixtures.ts';

describe('skill documents', () => {
  const now = new Date('2025-01-02T03:04:05Z');
  // Three attempts at arith level 2 (two succeeded), one failed attempt at level 3.
  const history = () => [
    makeTrajectory({ id: 'a', difficulty: 2, token_count: 9 }),
    makeTrajectory({ id: 'b', difficulty: 2, token_count: 6 }),
    makeTrajectory({ id: 'c', difficulty: 2, success: false }),
    makeTrajectory({ id: 'd', difficulty: 3, success: false }),
  ];

  it('aggregates one task type (environment and level): usage = successes, rate = successes / attempts', () => {
    const skills = skillsFromTrajectories(history(), { now, describe: () => 'Arithmetic with calc.' });
    expect(skills).toHaveLength(1); // level 3 never succeeded
    expect(skills[0]).toMatchObject({
      name: 'arith-tool-level-2',
      usage_count: 2,
      success_rate: 0.667,
      created: '2025-01-02T03:04:05.000Z',
    });
    expect(skills[0].description).toBe('Arithmetic with calc. (arith_tool, level 2)');
    const body = skillBody(skills[0]);
    expect(body).toContain('## Procedure');
    expect(body).toContain('1. Call `calculator` with `{"expression":');
    // Examples are the successful episodes, shortest first, verbatim.
    expect(skillExamples(skills[0]).map((e) => e.messages.length)).toEqual([5, 5]);
    expect(skillExamples(skills[0])).toHaveLength(2);
    expect(skillsFromTrajectories(history(), { minSuccessRate: 0.7 })).toEqual([]);
  });

  it('parses and renders front matter; a round trip keeps fields, body and examples', () => {
    const [skill] = skillsFromTrajectories(history(), { now });
    const parsed = parseSkill(skill.markdown, 'add.md');
    expect(parsed).toEqual(skill);
    const used = { ...parsed, usage_count: 6, success_rate: 5 / 6 };
    const again = parseSkill(renderSkill(used), 'add.md');
    expect(again).toMatchObject({ name: 'arith-tool-level-2', usage_count: 6, success_rate: 0.833 });
    expect(skillExamples(again)).toEqual(skillExamples(skill));
  });

  it('refuses malformed documents, naming the field', () => {
    expect(() => parseSkill('# no front matter', 'a.md')).toThrow(ImportError);
    expect(() => parseSkill('---\nname: x\ndescription: y\nusage_count: -1\n---\n', 'b.md')).toThrow(
      /b\.md: field usage_count: usage_count must be a whole number/,
    );
    expect(() => parseSkill('---\nname: [\n---\n', 'c.md')).toThrow(/c\.md: front matter is not valid YAML/);
  });

  it("skill_to_instruction: examples of skills with enough successful uses, in the agent's own format", () => {
    const [skill] = skillsFromTrajectories(history(), { now });
    const rows = skillsToInstructions([
      { ...skill, name: 'rare', usage_count: 4 },
      { ...skill, name: 'often', usage_count: 5 },
    ]);
    expect(rows.map((r) => r.source)).toEqual(['skill:often', 'skill:often']);
    expect(rows[0].messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(rows[0].messages[2].content).toContain('<tool_call>');
    expect(rows[0].tools[0].name).toBe('calculator');
    expect(skillsToInstructions([skill], { minUsage: 2, minSuccessRate: 0.9 })).toEqual([]);
  });

  it('merges JSONL files into one deduplicated dataset, validating all files first', () => {
    const a = '{"messages":[{"role":"user","content":"1"}]}\n{"messages":[{"role":"user","content":"2"}]}\n';
    const b = '{"messages":[{"role":"user","content":"2"}],"score":1}\n{"messages":[{"role":"user","content":"3"}]}\n';
    const merged = mergeJsonl([
      { name: 'a.jsonl', data: a },
      { name: 'b.jsonl', data: b },
    ]);
    expect(merged).toMatchObject({ rows: 3, duplicates: 1 });
    expect(
      merged.jsonl
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).messages[0].content),
    ).toEqual(['1', '2', '3']);
    expect(() =>
      mergeJsonl([
        { name: 'a.jsonl', data: a },
        { name: 'bad.jsonl', data: '[1]\n' },
      ]),
    ).toThrow(/bad\.jsonl: row 1: each line must be a JSON object/);
  });
});
