/**
 * Untrusted chat templates within a render budget: loops, nested loops, huge joins and huge prompts end
 * with an error naming the cause; so do values that grow by doubling (a few evaluations, a huge list or
 * string), builtins asked for a huge result (an indent of 10^8 spaces) and loops that write a large value
 * many times. Each is stopped by its size budget, before the deadline (the error names which).
 */
import { describe, expect, it } from 'vitest';
import { ChatTemplate } from '../../src/format/chat-template.ts';

const BASE =
  '{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}';
const user = [{ role: 'user' as const, content: 'hi' }];

describe('chat template budgets', () => {
  it('real templates render, reverse ranges over messages included', () => {
    const t = new ChatTemplate(BASE + '{% for i in range(messages|length - 1, -1, -1) %}{{ i }}{% endfor %}');
    expect(t.render(user, { addGenerationPrompt: true })).toBe('<|user|>hi<|end|><|assistant|>0');
  });

  it.each([
    ['a long loop', '{% for i in range(10000000) %}x{% endfor %}', /range\(\) items/],
    [
      'nested loops',
      '{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}{% endfor %}{% endfor %}{% endfor %}',
      /range\(\) items/,
    ],
    ['a huge join', "{{ range(50000000) | join(',') }}", /range\(\) items/],
  ])('%s stops with an error naming the budget', (_name, extra) => {
    // The range count, or on a busy machine the deadline, whichever comes first.
    expect(() => new ChatTemplate(BASE + extra)).toThrow(
      /chat_template failed to render: (the template's loops ran past 100000 range\(\) items|the render took more than 2000 ms)/,
    );
  });

  it('ends loops that need no range(): nested loops over the messages', () => {
    const nested = new ChatTemplate(
      BASE +
        '{% for a in messages %}{% for b in messages %}{% for c in messages %}{{ "" }}{% endfor %}{% endfor %}{% endfor %}',
    );
    const many = Array.from({ length: 300 }, (_, i) => ({ role: 'user' as const, content: String(i) }));
    // Whichever ends it first on this machine: the evaluation count or the deadline.
    const budget =
      /chat_template failed to render: (the template evaluated more than 2000000 expressions|the render took more than 2000 ms)/;
    expect(() => nested.render(many)).toThrow(budget);
    // A real conversation of the same size is far inside the budget.
    expect(new ChatTemplate(BASE).render(many)).toContain('<|user|>299<|end|>');
  });

  it('refuses a 128 MiB prompt and a template that blows its input up', () => {
    const t = new ChatTemplate(BASE);
    expect(() => t.render([{ role: 'user', content: 'x'.repeat(128 * 1024 * 1024) }])).toThrow(
      /above the 4194304 a render accepts/,
    );
    const doubling = new ChatTemplate(
      BASE +
        '{% set s = namespace(v=messages[0].content) %}{% for i in range(12) %}{% set s.v = s.v ~ s.v %}{% endfor %}{{ s.v }}',
    );
    expect(() => doubling.render([{ role: 'user', content: 'y'.repeat(4000) }])).toThrow(
      /built a string of 16384000 characters, above the 8388608 a render may build/,
    );
  });
});

describe('chat template size budgets', () => {
  const render =
    (extra: string, content = 'hi') =>
    () =>
      new ChatTemplate(BASE + extra).render([{ role: 'user', content }]);

  it('stops a list doubled 30 times at the list budget, in the loop scope and through a namespace', () => {
    expect(render('{% set x = [1] %}{% for i in range(30) %}{% set x = x + x %}{% endfor %}')).toThrow(
      /^chat_template failed to render: the template built a list of 2097152 items, above the 1048576 a render may build$/,
    );
    expect(
      render(
        '{% set ns = namespace(x=[1]) %}{% for i in range(30) %}{% set ns.x = ns.x + ns.x %}{% endfor %}{{ ns.x|length }}',
      ),
    ).toThrow(/the template built a list of 2097152 items, above the 1048576 a render may build/);
  });

  it('counts a list that holds another twice by what it would write: [x, x] doubled 40 times stops', () => {
    expect(
      render(
        '{% set ns = namespace(x=[1]) %}{% for i in range(40) %}{% set ns.x = [ns.x, ns.x] %}{% endfor %}{{ ns.x|length }}',
      ),
    ).toThrow(
      /the template built a (list|mapping) that holds \d+ characters as written, above the 8388608 a render may build/,
    );
  });

  it('refuses tojson(indent=100000000) before building its padding, however the indent is given', () => {
    for (const call of ['tojson(indent=100000000)', 'tojson(indent=n)', "tojson(**{'indent': n})"]) {
      expect(render(`{% set n = 10 ** 8 %}{{ messages|${call} }}`)).toThrow(
        /^chat_template failed to render: tojson\(\) asks for an indent of 100000000 spaces, above the 64 a render allows$/,
      );
    }
    expect(render('{{ messages[0].content|indent(100000000) }}')).toThrow(
      /indent\(\) asks for an indent of 100000000 spaces, above the 64/,
    );
  });

  it('works out what tojson, indent, join and replace would build and refuses it before they run', () => {
    const content = 'x'.repeat(1_000_000);
    const tree = '{% set ns = namespace(x=[1]) %}{% for i in range(18) %}{% set ns.x = [ns.x, ns.x] %}{% endfor %}';
    expect(render(`${tree}{{ ns.x|tojson(indent=4)|length }}`)).toThrow(
      /tojson\(\) would build about \d+ characters, above the 8388608 a render may build/,
    );
    expect(render("{{ messages[0].content|replace('x', '\n')|indent(64, true, true)|length }}", content)).toThrow(
      /indent\(\) would build about 65000064 characters, above the 8388608 a render may build/,
    );
    expect(render('{{ range(5000)|join(messages[0].content)|length }}', content)).toThrow(
      /join\(\) would build about 4999\d{6} characters, above the 8388608/,
    );
    expect(render('{{ messages[0].content.replace("x", messages[0].content)|length }}', content)).toThrow(
      /replace\(\) would build about 1000000000000 characters/,
    );
  });

  it('counts output as it is written: a loop that writes a 1 MB value 100,000 times stops at the output budget', () => {
    expect(render('{% for i in range(100000) %}{{ messages|tojson }}{% endfor %}', 'x'.repeat(1_000_000))).toThrow(
      /^chat_template failed to render: the template wrote more than 8388608 characters, the most a render may write$/,
    );
  });

  it('leaves real uses alone: tojson with an indent, replace, split and join on a long conversation', () => {
    const t = new ChatTemplate(
      BASE +
        "{{ messages|tojson(indent=4) }}|{{ messages[0].content.replace('a', 'bb')|length }}|{{ messages[0].content.split('a')|length }}|{{ messages|map(attribute='role')|join(', ') }}",
    );
    const content = 'ab'.repeat(500_000);
    const text = t.render([
      { role: 'user', content },
      { role: 'assistant', content: 'ok' },
    ]);
    expect(text).toContain('<|assistant|>ok<|end|>[\n    {\n        "role": "user",\n        "content": "abab');
    expect(text.endsWith('|1500000|500001|user, assistant')).toBe(true);
  });
});
