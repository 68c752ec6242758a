/** Word lists for the text environments (letter_count, text_reverse), lowercase ASCII, grouped by length. */

export const SHORT_WORDS = [
  'cat', 'dog', 'sun', 'map', 'cup', 'red', 'box', 'hat', 'pen', 'egg', 'bee', 'sea', 'tree', 'book', 'moon', 'fish', 'bird',
  'milk', 'door', 'rain', 'star', 'leaf', 'ball', 'bell', 'hill', 'wall', 'road', 'ship', 'frog', 'wolf', 'lamp', 'desk',
  'apple', 'grass', 'bread', 'water', 'river', 'stone', 'cloud', 'green', 'sheep', 'table', 'chair', 'light', 'horse',
  'house', 'paper', 'glass', 'happy', 'berry', 'llama', 'puppy', 'kitten', 'letter', 'banana', 'coffee', 'butter',
  'yellow', 'purple', 'garden', 'pepper', 'summer', 'winter', 'bottle', 'cookie', 'rabbit', 'carrot', 'pillow',
];

export const LONG_WORDS = [
  'strawberry', 'mississippi', 'bookkeeper', 'committee', 'successful', 'parallel', 'occurrence', 'assessment',
  'balloon', 'coffee', 'raspberry', 'tomorrow', 'necessary', 'possession', 'embarrass', 'millennium', 'accommodate',
  'programming', 'engineering', 'referee', 'sleeplessness', 'illegally', 'wonderful', 'beautiful', 'chocolate',
  'elephant', 'butterfly', 'dictionary', 'tennessee', 'address', 'mattress', 'giraffe', 'pineapple', 'keyboard',
  'assistant', 'grammar', 'happiness', 'collection', 'telephone', 'waterfall', 'vacuum', 'bubblegum', 'cinnamon',
  'peppermint', 'marshmallow', 'hippopotamus', 'abbreviation', 'bookshelf', 'crossroads', 'daffodil', 'sunflower',
];

export const FILLER_WORDS = [
  'the', 'a', 'big', 'small', 'quick', 'slow', 'old', 'new', 'blue', 'red', 'green', 'happy', 'lazy', 'brown', 'bright',
  'cat', 'dog', 'fox', 'bird', 'fish', 'tree', 'river', 'hill', 'house', 'garden', 'moon', 'star', 'ship', 'train', 'book',
  'runs', 'jumps', 'sees', 'likes', 'finds', 'eats', 'reads', 'sings', 'sleeps', 'swims', 'over', 'under', 'near', 'by',
  'and', 'with', 'in', 'on', 'to', 'from', 'every', 'morning', 'night', 'today', 'again', 'quietly', 'often',
];
