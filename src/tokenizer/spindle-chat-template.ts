/**
 * The chat template of Spindle's byte models (models/spindle-base and every model saved or merged from
 * one), for transformers' `apply_chat_template` and TRL. It writes exactly the text Spindle renders and
 * trains on (format/chatml.ts, format/system-prompt.ts, train/sft-data.ts), so a chat JSONL row that
 * Spindle exported renders back to the token text of its trajectory:
 *
 *   turns      `<|im_start|>{role}\n{content}<|im_end|>\n`, `<think>` left in the content as written
 *   tools      a system message that lists tools (Spindle's own system prompts do, in `<tools>`) is
 *              written as it is; otherwise `tools` are listed as Spindle's full system prompt lists
 *              them, after the system message's text
 *   calls      each `tool_calls` entry as `<tool_call>{"name":…,"arguments":{…}}</tool_call>` (compact
 *              JSON; arguments that are null left out, as 🤗 datasets adds every other row's keys as
 *              nulls), one per line after the content
 *   results    consecutive `tool` messages in one `tool` turn, each in `<tool_response>\n…\n</tool_response>`
 *   training   `{% generation %}` around each assistant turn's content and its `<|im_end|>`: the tokens
 *              Spindle's assistant mask covers (what TRL's `assistant_only_loss` trains)
 *
 * tests/export/chat-template-export.test.ts renders it with @huggingface/jinja on exported rows against
 * the trajectories' tokens and against Spindle's own system prompt, so neither side drifts.
 */

/** Jinja source (String.raw: `\n` stays an escape for Jinja's string literals). */
export const SPINDLE_CHAT_TEMPLATE = String.raw`{#- Spindle's chat format: ChatML, Hermes tool calls as Spindle writes them. -#}
{%- set system = messages[0].content if messages and messages[0].role == 'system' else none %}
{%- if tools and not (system is string and '<tools>' in system) %}
    {{- '<|im_start|>system\n' }}
    {%- if system %}
        {{- system | trim }}
        {{- '\n' }}
    {%- endif %}
    {{- 'You can call functions to help with the user request. ' }}
    {{- 'The available functions are described by the JSON schemas inside <tools></tools>:\n<tools>' }}
    {%- for tool in tools %}
        {{- '\n' + (tool | tojson(separators=(',', ':'))) }}
    {%- endfor %}
    {{- '\n</tools>\nFirst reason step by step inside <think></think>. To call a function, write a JSON object with its name and ' }}
    {{- 'arguments inside <tool_call></tool_call> tags, one object per call (several calls per turn are allowed):\n' }}
    {{- '<tool_call>\n{"name": "<function-name>", "arguments": {<argument-name>: <value>}}\n</tool_call>\n' }}
    {{- 'Each result comes back inside <tool_response></tool_response>. When you know the answer, reply with it without a tool call.' }}
    {{- '<|im_end|>\n' }}
{%- elif system is not none %}
    {{- '<|im_start|>system\n' + system + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == 'system' and loop.first %}
    {%- elif message.role == 'assistant' %}
        {{- '<|im_start|>assistant\n' }}
        {%- generation %}
        {{- message.content if message.content is string else '' }}
        {%- for call in (message.tool_calls or []) %}
            {%- set fn = call.function if call.function is defined else call %}
            {%- if message.content or not loop.first %}
                {{- '\n' }}
            {%- endif %}
            {{- '<tool_call>{"name":' + (fn.name | tojson) + ',"arguments":' }}
            {%- if fn.arguments is string %}
                {{- fn.arguments }}
            {%- else %}
                {#- Key by key, leaving out nulls: 🤗 datasets gives every row's arguments all rows' keys, as nulls. -#}
                {{- '{' }}
                {%- for key, value in fn.arguments.items() if value is not none %}
                    {%- if not loop.first %}
                        {{- ',' }}
                    {%- endif %}
                    {{- (key | tojson) + ':' + (value | tojson(separators=(',', ':'))) }}
                {%- endfor %}
                {{- '}' }}
            {%- endif %}
            {{- '}</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>' }}
        {%- endgeneration %}
        {{- '\n' }}
    {%- elif message.role == 'tool' %}
        {%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}
            {{- '<|im_start|>tool\n' }}
        {%- else %}
            {{- '\n' }}
        {%- endif %}
        {{- '<tool_response>\n' + message.content + '\n</tool_response>' }}
        {%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- else %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
`;

/**
 * tokenizer_config.json of a model in Spindle's chat format (the byte models, the BPE base): its
 * special tokens by name and this template, for transformers' AutoTokenizer and apply_chat_template.
 */
export function spindleTokenizerConfig(modelMaxLength: number): Record<string, unknown> {
  return {
    tokenizer_class: 'PreTrainedTokenizerFast',
    bos_token: null,
    eos_token: '<|endoftext|>',
    pad_token: '<|pad|>',
    unk_token: null,
    model_max_length: modelMaxLength,
    clean_up_tokenization_spaces: false,
    chat_template: SPINDLE_CHAT_TEMPLATE,
  };
}
