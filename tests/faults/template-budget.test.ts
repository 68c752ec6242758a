/** Untrusted chat templates within a render budget: loops, nested loops, huge joins and huge prompts end with an error naming the cause. */
import { describe, expect, it } from 'vitest';
import { ChatTemplate } from '../../src/format/chat-template.ts';

const BASE = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}";
const user = [{ role: 'user' as const, content: 'hi' }];

describe('chat template budgets', () => {
  it('real templates render, reverse ranges over messages included', () => {
    const t = new ChatTemplate(BASE + "{% for i in range(messages|length - 1, -1, -1) %}{{ i }}{% endfor %}");
    expect(t.render(user, { addGenerationPrompt: true })).toBe('<|user|>hi<|end|><|assistant|>0');
  });

  it.each([
    ['a long loop', '{% for i in range(10000000) %}x{% endfor %}', /range\(\) items/],
    ['nested loops', '{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}{% endfor %}{% endfor %}{% endfor %}', /range\(\) items/],
    ['a huge join', "{{ range(50000000) | join(',') }}", /range\(\) items/],
  ])('%s stops with an error naming the budget', (_name, extra) => {
    // The range count, or on a busy machine the deadline, whichever comes first.
    expect(() => new ChatTemplate(BASE + extra)).toThrow(/chat_template failed to render: (the template's loops ran past 100000 range\(\) items|the render took more than 2000 ms)/);
  });

  it('ends loops that need no range(): nested loops over the messages', () => {
    const nested = new ChatTemplate(BASE + '{% for a in messages %}{% for b in messages %}{% for c in messages %}{{ "" }}{% endfor %}{% endfor %}{% endfor %}');
    const many = Array.from({ length: 300 }, (_, i) => ({ role: 'user' as const, content: String(i) }));
    // Whichever ends it first on this machine: the evaluation count or the deadline.
    const budget = /chat_template failed to render: (the template evaluated more than 2000000 expressions|the render took more than 2000 ms)/;
    expect(() => nested.render(many)).toThrow(budget);
    // A real conversation of the same size is far inside the budget.
    expect(new ChatTemplate(BASE).render(many)).toContain('<|user|>299<|end|>');
  });

  it('refuses a 128 MiB prompt and a template that blows its input up', () => {
    const t = new ChatTemplate(BASE);
    expect(() => t.render([{ role: 'user', content: 'x'.repeat(128 * 1024 * 1024) }])).toThrow(/above the 4194304 a render accepts/);
    const doubling = new ChatTemplate(BASE + "{% set s = namespace(v=messages[0].content) %}{% for i in range(12) %}{% set s.v = s.v ~ s.v %}{% endfor %}{{ s.v }}");
    expect(() => doubling.render([{ role: 'user', content: 'y'.repeat(4000) }])).toThrow(/rendered \d+ characters, above the 8388608 allowed/);
  });
});
