/**
 * Catalog for js_debug: buggy functions, their fixes, and hidden test inputs. `{fn}` is replaced by a
 * name drawn from `names`, `{k}` by an integer drawn from `k`. The prompt shows `task` and `buggy`;
 * `fixed` is the expert's answer and the reference the hidden tests compare against; `hint` is the
 * expert's one-line thought; `demo` is the argument list the expert checks its fix with.
 */

export interface BugTemplate {
  id: string;
  level: number;
  names: string[];
  k?: [number, number];
  task: string;
  buggy: string;
  fixed: string;
  hint: string;
  tests: unknown[][];
  demo: unknown[];
}

export const JS_BUGS: BugTemplate[] = [
  // Level 1: one wrong operator in a one-line function.
  {
    id: 'add',
    level: 1,
    names: ['add', 'sum2', 'plus'],
    task: '{fn}(a, b) should return a + b.',
    buggy: 'function {fn}(a, b) {\n  return a - b;\n}',
    fixed: 'function {fn}(a, b) {\n  return a + b;\n}',
    hint: 'It subtracts; it should add.',
    tests: [
      [1, 2],
      [5, 7],
      [-3, 3],
      [0, 0],
      [10, -4],
    ],
    demo: [2, 3],
  },
  {
    id: 'add_k',
    level: 1,
    names: ['addK', 'bump', 'shift'],
    k: [2, 99],
    task: '{fn}(x) should return x + {k}.',
    buggy: 'function {fn}(x) {\n  return x - {k};\n}',
    fixed: 'function {fn}(x) {\n  return x + {k};\n}',
    hint: 'It subtracts {k}; it should add it.',
    tests: [[0], [1], [-5], [100], [7]],
    demo: [1],
  },
  {
    id: 'times_k',
    level: 1,
    names: ['times', 'scale', 'mulK'],
    k: [2, 20],
    task: '{fn}(x) should return x * {k}.',
    buggy: 'function {fn}(x) {\n  return x + {k};\n}',
    fixed: 'function {fn}(x) {\n  return x * {k};\n}',
    hint: 'It adds {k}; it should multiply.',
    tests: [[0], [1], [3], [-2], [10]],
    demo: [3],
  },
  {
    id: 'is_even',
    level: 1,
    names: ['isEven', 'even', 'evenQ'],
    task: '{fn}(n) should return true when n is even.',
    buggy: 'function {fn}(n) {\n  return n % 2 === 1;\n}',
    fixed: 'function {fn}(n) {\n  return n % 2 === 0;\n}',
    hint: 'Even means remainder 0, not 1.',
    tests: [[0], [1], [2], [7], [10]],
    demo: [4],
  },
  {
    id: 'square',
    level: 1,
    names: ['square', 'sq', 'pow2'],
    task: '{fn}(x) should return x squared.',
    buggy: 'function {fn}(x) {\n  return x * 2;\n}',
    fixed: 'function {fn}(x) {\n  return x * x;\n}',
    hint: 'x * 2 doubles; squaring is x * x.',
    tests: [[0], [1], [3], [-4], [12]],
    demo: [3],
  },

  // Level 2: a wrong comparison or boundary.
  {
    id: 'max2',
    level: 2,
    names: ['max2', 'bigger', 'larger'],
    task: '{fn}(a, b) should return the larger of a and b.',
    buggy: 'function {fn}(a, b) {\n  return a < b ? a : b;\n}',
    fixed: 'function {fn}(a, b) {\n  return a > b ? a : b;\n}',
    hint: 'The comparison picks the smaller one.',
    tests: [
      [1, 2],
      [5, 3],
      [-1, -7],
      [4, 4],
      [0, 9],
    ],
    demo: [2, 5],
  },
  {
    id: 'count_above',
    level: 2,
    names: ['countAbove', 'numAbove', 'over'],
    k: [1, 9],
    task: '{fn}(arr) should count items greater than {k}.',
    buggy: 'function {fn}(arr) {\n  return arr.filter((x) => x >= {k}).length;\n}',
    fixed: 'function {fn}(arr) {\n  return arr.filter((x) => x > {k}).length;\n}',
    hint: 'It counts items equal to {k} too; use >.',
    tests: [[[1, 5, 9, 10]], [[]], [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]], [[20, 30]], [[-1, 3, 3, 7]]],
    demo: [[3, 10]],
  },
  {
    id: 'last_item',
    level: 2,
    names: ['last', 'lastItem', 'tail'],
    task: '{fn}(arr) should return the last element.',
    buggy: 'function {fn}(arr) {\n  return arr[arr.length];\n}',
    fixed: 'function {fn}(arr) {\n  return arr[arr.length - 1];\n}',
    hint: 'Indexes end at length - 1.',
    tests: [[[1, 2, 3]], [[7]], [['a', 'b']], [[0, 0, 5]]],
    demo: [[1, 2, 3]],
  },
  {
    id: 'clamp',
    level: 2,
    names: ['clamp', 'limit', 'bound'],
    task: '{fn}(x, lo, hi) should keep x between lo and hi.',
    buggy: 'function {fn}(x, lo, hi) {\n  return Math.max(hi, Math.min(lo, x));\n}',
    fixed: 'function {fn}(x, lo, hi) {\n  return Math.max(lo, Math.min(hi, x));\n}',
    hint: 'lo and hi are swapped.',
    tests: [
      [5, 0, 10],
      [-3, 0, 10],
      [42, 0, 10],
      [7, 7, 9],
      [1, -5, 5],
    ],
    demo: [15, 0, 10],
  },
  {
    id: 'abs',
    level: 2,
    names: ['abs', 'magnitude', 'absVal'],
    task: '{fn}(x) should return the absolute value of x.',
    buggy: 'function {fn}(x) {\n  return x < 0 ? x : -x;\n}',
    fixed: 'function {fn}(x) {\n  return x < 0 ? -x : x;\n}',
    hint: 'The branches are swapped.',
    tests: [[3], [-3], [0], [-12], [8]],
    demo: [-4],
  },

  // Level 3: a loop bound or initial value.
  {
    id: 'sum_array',
    level: 3,
    names: ['sumAll', 'total', 'sumArray'],
    task: '{fn}(arr) should return the sum of arr.',
    buggy: 'function {fn}(arr) {\n  let s = 0;\n  for (let i = 1; i < arr.length; i++) s += arr[i];\n  return s;\n}',
    fixed: 'function {fn}(arr) {\n  let s = 0;\n  for (let i = 0; i < arr.length; i++) s += arr[i];\n  return s;\n}',
    hint: 'The loop skips index 0.',
    tests: [[[1, 2, 3]], [[5]], [[]], [[-1, 1, 10]], [[4, 4, 4, 4]]],
    demo: [[1, 2, 3]],
  },
  {
    id: 'factorial',
    level: 3,
    names: ['factorial', 'fact', 'prodTo'],
    task: '{fn}(n) should return n! (1 for n = 0).',
    buggy: 'function {fn}(n) {\n  let p = 1;\n  for (let i = 1; i < n; i++) p *= i;\n  return p;\n}',
    fixed: 'function {fn}(n) {\n  let p = 1;\n  for (let i = 1; i <= n; i++) p *= i;\n  return p;\n}',
    hint: 'The loop stops before n.',
    tests: [[0], [1], [3], [5], [7]],
    demo: [5],
  },
  {
    id: 'range',
    level: 3,
    names: ['range', 'upTo', 'seq'],
    task: '{fn}(n) should return [0, 1, ..., n - 1].',
    buggy: 'function {fn}(n) {\n  const out = [];\n  for (let i = 0; i <= n; i++) out.push(i);\n  return out;\n}',
    fixed: 'function {fn}(n) {\n  const out = [];\n  for (let i = 0; i < n; i++) out.push(i);\n  return out;\n}',
    hint: 'The loop includes n.',
    tests: [[0], [1], [4], [6]],
    demo: [3],
  },
  {
    id: 'count_char',
    level: 3,
    names: ['countChar', 'occurrences', 'tally'],
    task: '{fn}(s, c) should count how often c occurs in s.',
    buggy: 'function {fn}(s, c) {\n  let n = 0;\n  for (const x of s) if (x !== c) n++;\n  return n;\n}',
    fixed: 'function {fn}(s, c) {\n  let n = 0;\n  for (const x of s) if (x === c) n++;\n  return n;\n}',
    hint: 'It counts the other characters.',
    tests: [
      ['banana', 'a'],
      ['abc', 'z'],
      ['', 'a'],
      ['zzz', 'z'],
    ],
    demo: ['banana', 'a'],
  },
  {
    id: 'min_array',
    level: 3,
    names: ['minOf', 'smallest', 'arrayMin'],
    task: '{fn}(arr) should return the smallest item of a non-empty arr.',
    buggy: 'function {fn}(arr) {\n  let m = 0;\n  for (const x of arr) if (x < m) m = x;\n  return m;\n}',
    fixed: 'function {fn}(arr) {\n  let m = arr[0];\n  for (const x of arr) if (x < m) m = x;\n  return m;\n}',
    hint: 'Starting at 0 is wrong for positive arrays.',
    tests: [[[3, 1, 2]], [[5]], [[-2, -9, 4]], [[7, 8, 9]]],
    demo: [[4, 6, 5]],
  },

  // Level 4: two bugs, or a bug in the logic rather than a constant.
  {
    id: 'average',
    level: 4,
    names: ['average', 'mean', 'avg'],
    task: '{fn}(arr) should return the mean of a non-empty arr.',
    buggy: 'function {fn}(arr) {\n  let s = 1;\n  for (const x of arr) s += x;\n  return s / (arr.length - 1);\n}',
    fixed: 'function {fn}(arr) {\n  let s = 0;\n  for (const x of arr) s += x;\n  return s / arr.length;\n}',
    hint: 'The sum starts at 1 and the divisor is off by one.',
    tests: [[[2, 4]], [[5]], [[1, 2, 3, 4]], [[-3, 3, 6]]],
    demo: [[2, 4, 6]],
  },
  {
    id: 'reverse_string',
    level: 4,
    names: ['reverse', 'backwards', 'flip'],
    task: '{fn}(s) should return s reversed.',
    buggy: "function {fn}(s) {\n  let out = '';\n  for (let i = s.length; i > 0; i--) out += s[i];\n  return out;\n}",
    fixed:
      "function {fn}(s) {\n  let out = '';\n  for (let i = s.length - 1; i >= 0; i--) out += s[i];\n  return out;\n}",
    hint: 'The loop starts past the end and misses index 0.',
    tests: [['abc'], ['a'], [''], ['hello world']],
    demo: ['abc'],
  },
  {
    id: 'fib',
    level: 4,
    names: ['fib', 'fibonacci', 'fibN'],
    task: '{fn}(n) should return the n-th Fibonacci number (fib(0) = 0, fib(1) = 1).',
    buggy:
      'function {fn}(n) {\n  let a = 1, b = 1;\n  for (let i = 0; i < n; i++) [a, b] = [b, a + b];\n  return b;\n}',
    fixed:
      'function {fn}(n) {\n  let a = 0, b = 1;\n  for (let i = 0; i < n; i++) [a, b] = [b, a + b];\n  return a;\n}',
    hint: 'It starts at 1, 1 and returns the wrong variable.',
    tests: [[0], [1], [2], [7], [10]],
    demo: [7],
  },
  {
    id: 'max_array',
    level: 4,
    names: ['maxOf', 'largest', 'arrayMax'],
    task: '{fn}(arr) should return the largest item of a non-empty arr.',
    buggy:
      'function {fn}(arr) {\n  let m = 0;\n  for (let i = 1; i < arr.length; i++) if (arr[i] < m) m = arr[i];\n  return m;\n}',
    fixed:
      'function {fn}(arr) {\n  let m = arr[0];\n  for (let i = 1; i < arr.length; i++) if (arr[i] > m) m = arr[i];\n  return m;\n}',
    hint: 'Start from arr[0] and keep bigger items.',
    tests: [[[3, 9, 2]], [[-5, -2, -8]], [[4]], [[1, 1, 1]]],
    demo: [[3, 9, 2]],
  },
  {
    id: 'count_words',
    level: 4,
    names: ['countWords', 'wordCount', 'words'],
    task: '{fn}(s) should count the words in s (split on spaces, ignore empty parts).',
    buggy: "function {fn}(s) {\n  return s.split(' ').length - 1;\n}",
    fixed: "function {fn}(s) {\n  return s.split(' ').filter((w) => w !== '').length;\n}",
    hint: 'Empty parts must be dropped and nothing subtracted.',
    tests: [['a b c'], ['hello'], [''], ['  two  words ']],
    demo: ['a b c'],
  },

  // Level 5: subtler logic.
  {
    id: 'is_prime',
    level: 5,
    names: ['isPrime', 'prime', 'primeQ'],
    task: '{fn}(n) should return true when the integer n is prime.',
    buggy: 'function {fn}(n) {\n  for (let i = 2; i <= n; i++) if (n % i === 0) return false;\n  return true;\n}',
    fixed:
      'function {fn}(n) {\n  if (n < 2) return false;\n  for (let i = 2; i * i <= n; i++) if (n % i === 0) return false;\n  return true;\n}',
    hint: 'n divides itself, and n < 2 is not prime.',
    tests: [[0], [1], [2], [9], [13], [25], [29]],
    demo: [13],
  },
  {
    id: 'binary_search',
    level: 5,
    names: ['search', 'bsearch', 'findIndex2'],
    task: '{fn}(arr, x) should return the index of x in sorted arr, or -1.',
    buggy:
      'function {fn}(arr, x) {\n  let lo = 0, hi = arr.length - 1;\n  while (lo < hi) {\n    const mid = (lo + hi) >> 1;\n    if (arr[mid] === x) return mid;\n    if (arr[mid] < x) lo = mid; else hi = mid - 1;\n  }\n  return -1;\n}',
    fixed:
      'function {fn}(arr, x) {\n  let lo = 0, hi = arr.length - 1;\n  while (lo <= hi) {\n    const mid = (lo + hi) >> 1;\n    if (arr[mid] === x) return mid;\n    if (arr[mid] < x) lo = mid + 1; else hi = mid - 1;\n  }\n  return -1;\n}',
    hint: 'The loop must run while lo <= hi and move lo past mid.',
    tests: [
      [[1, 3, 5, 7], 7],
      [[1, 3, 5, 7], 1],
      [[1, 3, 5, 7], 4],
      [[2], 2],
      [[], 1],
    ],
    demo: [[1, 3, 5, 7], 7],
  },
  {
    id: 'dedupe',
    level: 5,
    names: ['unique', 'dedupe', 'distinct'],
    task: '{fn}(arr) should return arr without repeats, first occurrences kept in order.',
    buggy: 'function {fn}(arr) {\n  return arr.filter((x, i) => arr.indexOf(x) !== i);\n}',
    fixed: 'function {fn}(arr) {\n  return arr.filter((x, i) => arr.indexOf(x) === i);\n}',
    hint: 'It keeps only the repeats.',
    tests: [[[1, 2, 1, 3, 2]], [[]], [[4, 4, 4]], [['a', 'b', 'a']]],
    demo: [[1, 2, 1]],
  },
  {
    id: 'fizzbuzz',
    level: 5,
    names: ['fizzbuzz', 'fb', 'fizz'],
    task: "{fn}(n) should return 'FizzBuzz' for multiples of 15, 'Fizz' for 3, 'Buzz' for 5, else n as a string.",
    buggy:
      "function {fn}(n) {\n  if (n % 3 === 0) return 'Fizz';\n  if (n % 5 === 0) return 'Buzz';\n  if (n % 15 === 0) return 'FizzBuzz';\n  return n;\n}",
    fixed:
      "function {fn}(n) {\n  if (n % 15 === 0) return 'FizzBuzz';\n  if (n % 3 === 0) return 'Fizz';\n  if (n % 5 === 0) return 'Buzz';\n  return String(n);\n}",
    hint: 'Check 15 first and return a string.',
    tests: [[3], [5], [15], [7], [30], [9]],
    demo: [15],
  },
  {
    id: 'capitalize',
    level: 5,
    names: ['titleCase', 'capitalize', 'capWords'],
    task: '{fn}(s) should upper-case the first letter of every space-separated word.',
    buggy: "function {fn}(s) {\n  return s.split(' ').map((w) => w[0].toUpperCase() + w.slice(0)).join(' ');\n}",
    fixed:
      "function {fn}(s) {\n  return s.split(' ').map((w) => (w ? w[0].toUpperCase() + w.slice(1) : w)).join(' ');\n}",
    hint: 'The first letter is repeated and empty words crash.',
    tests: [['hello world'], ['a'], ['x  y'], ['already Up']],
    demo: ['hello world'],
  },
];

export const JS_DEBUG_PROMPT = 'Fix the bug. {task}\n```js\n{code}\n```\nAnswer with the fixed function.';
