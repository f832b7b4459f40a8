// Writes the fixed articles that tests and benchmarks read (test/fixtures/articles/{short,medium,long}.md):
// deterministic prose with headings, lists, numbers and dates, at about 1,500, 15,000 and 100,000 characters.
// Run again only to change them: `node scripts/make-fixture-articles.mjs`.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const subjects = [
  'The river',
  'Our small team',
  'The old library',
  'A careful reader',
  'The night train',
  'The town council',
  'Every gardener',
  'The first prototype',
  'A patient teacher',
  'The harbour crew',
];
const verbs = [
  'noticed',
  'rebuilt',
  'measured',
  'described',
  'questioned',
  'improved',
  'remembered',
  'mapped',
  'repaired',
  'welcomed',
];
const objects = [
  'the morning light on the water',
  'a quieter way of working',
  'the cost of every shortcut',
  'the letters kept since 1987',
  'the long road to the coast',
  'a map of forgotten paths',
  'the sound of distant bells',
  'the habits of migrating birds',
  'a simpler kind of software',
  'the history of the stone bridge',
];
const tails = [
  'before anyone else did',
  'with great patience',
  'in less than 3 weeks',
  'for about $1,200',
  'on March 5, 2019',
  'at 10:30 in the morning',
  'with 45% fewer mistakes',
  'across 12 km of hills',
  'after years of small steps',
  'despite the cold winter',
];
const openers = [
  'In the end,',
  'Meanwhile,',
  'As it turned out,',
  'For a while,',
  'Later that year,',
  'Even so,',
  'By the spring of 2021,',
  'Some said that',
  'Quietly,',
  'Once again,',
];
const headings = [
  'A slow beginning',
  'What the records show',
  'The winter of changes',
  'Learning from mistakes',
  'Numbers and people',
  'A second look',
  'The long middle',
  'Small tools, large effects',
  'What remains',
  'Looking ahead',
];

function sentence(next) {
  const pick = (list) => list[Math.floor(next() * list.length)];
  const opener = next() < 0.35 ? `${pick(openers)} ` : '';
  const subject = pick(subjects);
  const text = `${opener}${opener ? subject.toLowerCase() : subject} ${pick(verbs)} ${pick(objects)} ${pick(tails)}.`;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function article(title, targetChars, seed) {
  const next = random(seed);
  const parts = [`# ${title}`];
  let section = 0;
  let length = parts[0].length;
  while (length < targetChars) {
    if (section === 0 || next() < 0.18) {
      const heading = `## ${headings[section % headings.length]}${section >= headings.length ? `, part ${Math.floor(section / headings.length) + 1}` : ''}`;
      parts.push(heading);
      length += heading.length + 2;
      section++;
    }
    let block;
    if (next() < 0.12) {
      block = Array.from({ length: 3 + Math.floor(next() * 3) }, () => `- ${sentence(next)}`).join('\n');
    } else {
      block = Array.from({ length: 3 + Math.floor(next() * 4) }, () => sentence(next)).join(' ');
    }
    if (length + block.length + 2 > targetChars && length > targetChars * 0.9) break;
    parts.push(block);
    length += block.length + 2;
  }
  let text = `${parts.join('\n\n')}\n`;
  // The service's limit is 100,000 characters: the long article sits just under it.
  while (text.length > targetChars) text = `${text.slice(0, text.lastIndexOf('\n\n', text.length - 2))}\n`;
  return text;
}

const sizes = { short: 1_500, medium: 15_000, long: 99_000 };
for (const [name, chars] of Object.entries(sizes)) {
  const text = article(`A ${name} article about patient work`, chars, chars);
  writeFileSync(path.join(root, 'test', 'fixtures', 'articles', `${name}.md`), text);
  console.log(`${name}.md: ${text.length} characters`);
}
