// Technical and numeric text for speech: versions, package names, identifiers, acronyms, Roman numerals, signs and
// operators, fractions, ranges, currencies by code, phone numbers and footnote markers. `toSpoken` (spoken.ts) runs
// `normalizeTechnical` before its general number rules (which would read "v1.2.3" as "V one two point three") and
// `normalizeLate` last (acronyms, pauses at dashes and ellipses).
import { numberToWords, ordinalWords, spellDigits, yearWords } from './numbers';
import {
  CAPITALIZED_WORDS,
  CURRENCY_PREFIXES,
  DENOMINATORS,
  FILE_EXTENSIONS,
  IDENTIFIER_PARTS,
  NAMES,
  ROMAN_CARDINAL_BEFORE,
  SAID_AS_WORDS,
  VERSION_BEFORE,
} from './tables';

const MAGNITUDE = '(?:\\s?(thousand|million|billion|trillion|bn|mn|k|m|b|t)\\b)?';
const MAGNITUDE_WORDS: Record<string, string> = {
  k: 'thousand',
  m: 'million',
  mn: 'million',
  b: 'billion',
  bn: 'billion',
  t: 'trillion',
};

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** A number as written ("1,250", "1.9", "20") in words; decimals digit by digit after the point. */
function amountWords(amount: string): string {
  const [whole = '0', fraction] = amount.replace(/,/g, '').split('.');
  return fraction ? `${numberToWords(whole || '0')} point ${spellDigits(fraction)}` : numberToWords(whole);
}

function magnitudeWord(magnitude: string | undefined): string {
  if (!magnitude) return '';
  return ` ${MAGNITUDE_WORDS[magnitude.toLowerCase()] ?? magnitude.toLowerCase()}`;
}

/** "20.11.5" -> "twenty point eleven point five": each part a number, as people read versions. */
export function versionWords(version: string): string {
  return version
    .split('.')
    .map((part) => (/^\d+$/.test(part) ? numberToWords(part) : part))
    .join(' point ');
}

const PRERELEASE = '(?:-(alpha|beta|rc|pre|preview|canary|next|dev)(?:\\.?(\\d+))?)?';

function prereleaseWords(label: string | undefined, number: string | undefined): string {
  if (!label) return '';
  const name = label.toLowerCase() === 'rc' ? 'release candidate' : label.toLowerCase();
  return ` ${name}${number ? ` ${numberToWords(number)}` : ''}`;
}

const NAME_PATTERN = new RegExp(
  `(^|[\\s(“"'\`])(${Object.keys(NAMES)
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join('|')})(?=$|[\\s,.;:!?)”"'\`])`,
  'g',
);

// Roman numerals up to 39 with L for the fifties (Louis XIV, Super Bowl LVIII); "XL" is a size, "LI" rare.
const ROMAN = /^(?:L?X{0,3})(?:IX|IV|V?I{0,3})$/;

function romanValue(numeral: string): number {
  const values: Record<string, number> = { I: 1, V: 5, X: 10, L: 50 };
  let total = 0;
  for (let i = 0; i < numeral.length; i++) {
    const value = values[numeral[i]!]!;
    const next = values[numeral[i + 1] ?? ''] ?? 0;
    total += value < next ? -value : value;
  }
  return total;
}

function spellLetters(word: string): string {
  return word.split('').join(' ');
}

/** How one all-capital word is said: a word from the table, an emphasized word, or letter by letter. */
export function acronymWords(word: string): string {
  const said = SAID_AS_WORDS[word];
  if (said) return said;
  if (CAPITALIZED_WORDS.has(word)) return word.toLowerCase();
  // Long capitals with vowels are shouted words ("IMPORTANT", "RETRIES"), not initials.
  if (word.length >= 6 && /[AEIOU]/.test(word) && /[AEIOUY][^AEIOUY]*[AEIOUY]/.test(word)) return word.toLowerCase();
  return spellLetters(word);
}

function identifierPart(part: string): string {
  if (/^\d+$/.test(part)) return part;
  const lower = part.toLowerCase();
  const known = IDENTIFIER_PARTS[lower];
  if (known) return known;
  if (/^[A-Z]{2,}$/.test(part)) return acronymWords(part);
  if (!/[aeiouy]/.test(lower) && lower.length > 1) return spellLetters(lower.toUpperCase());
  return lower;
}

/** "remoteTimeoutMs" -> "remote timeout milliseconds"; "MAX_RETRIES" -> "max retries"; "XMLHttpRequest" -> "X M L H T T P request". */
export function identifierWords(identifier: string): string {
  const parts = identifier
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([A-Za-z])(\d)/g, '$1 $2')
    .replace(/(\d)([A-Za-z])/g, '$1 $2')
    .split(/[\s_]+/)
    .filter(Boolean);
  return parts.map(identifierPart).join(' ');
}

function isIdentifier(token: string): boolean {
  if (/^(?:Mc|Mac)[A-Z][a-z]/.test(token)) return false; // names: McDonald, MacArthur
  if (/_/.test(token)) return /[A-Za-z]/.test(token) && !/^_|_$/.test(token);
  if (/[a-z][A-Z]/.test(token)) return true; // camelCase, PascalCase, CommonJS
  if (/[A-Z]{2,}[a-z]{2,}/.test(token)) return true; // XMLHttpRequest
  return /^[a-z]+\d+[a-z]*$/i.test(token) && /[a-z]{2}/i.test(token) && !/^\d/.test(token); // arm64, utf8, es2022
}

/** An HTTP status code as people say it: 503 is "five oh three", 500 "five hundred". */
function statusCodeWords(code: string): string {
  return code.endsWith('00')
    ? numberToWords(code)
    : code
        .split('')
        .map((d) => (d === '0' ? 'oh' : numberToWords(d)))
        .join(' ');
}

function phoneWords(phone: string): string {
  const plus = phone.trim().startsWith('+') ? 'plus ' : '';
  const groups = phone
    .replace(/^\s*\+/, '')
    .split(/[\s().-]+/)
    .filter(Boolean);
  return `${plus}${groups.map((g) => spellDigits(g)).join(', ')}`;
}

function fractionWords(numerator: string, denominator: string): string | undefined {
  const top = Number(numerator);
  const bottom = Number(denominator);
  if (!top || !bottom || numerator.length > 3) return undefined;
  const names = DENOMINATORS[bottom];
  if (names) return `${numberToWords(top)} ${top === 1 ? names[0] : names[1]}`;
  if (bottom <= 20 || bottom === 1000) return `${numberToWords(top)} ${ordinalWords(bottom)}${top === 1 ? '' : 's'}`;
  return `${numberToWords(top)} over ${numberToWords(bottom)}`;
}

function powerWords(exponent: string): string {
  if (exponent === '2') return 'squared';
  if (exponent === '3') return 'cubed';
  return `to the power of ${/^\d+$/.test(exponent) ? numberToWords(exponent) : exponent}`;
}

function fullYear(first: string, second: string): string {
  // "2010-15": the second year shares the century of the first.
  return second.length === 2 ? `${first.slice(0, 2)}${second}` : second;
}

/** Before the general number rules: everything whose digits, dots, slashes or signs mean something else. */
export function normalizeTechnical(text: string): string {
  let s = text;

  // Footnote markers are not words: "[1]", "[^2]", "¹", "[citation needed]".
  s = s.replace(/\[\^?\d{1,3}\]|\[(?:note|citation needed|nb)[^\]]{0,20}\]|[¹²³⁴⁵⁶⁷⁸⁹⁰]+/gi, '');

  // Names said as words: k8s, Node.js, iOS, 24/7.
  s = s.replace(NAME_PATTERN, (_m, before: string, name: string) => `${before}${NAMES[name]}`);

  // Package names with versions: @types/node@20.11.5, lodash@^4.17.21.
  s = s.replace(
    /(^|[\s(“"'`])(@[\w.-]+\/)?([a-z][\w.-]*)@[\^~]?(\d+(?:\.\d+)*)(?=$|[\s,;:!?)”"'`]|\.(?:\s|$))/gi,
    (_m, before: string, scope: string | undefined, name: string, version: string) =>
      `${before}${scope ? `at ${scope.slice(1, -1)} slash ` : ''}${name}, version ${versionWords(version)}`,
  );
  s = s.replace(
    /(^|[\s(“"'`])@([\w.-]+)\/([\w.-]+)/g,
    (_m, before: string, scope: string, name: string) => `${before}at ${scope} slash ${name}`,
  );

  // Paths and file names: ~/.cache/build, ./src, /usr/bin, git.exe, package.json.
  s = s.replace(
    /(^|[\s(“"'`])(~|\.{1,2})?((?:\/\.?[A-Za-z_][\w.-]*)+)\/?(?=$|[\s,;:!?)”"'`]|\.(?:\s|$))/g,
    (match, before: string, start: string | undefined, rest: string) => {
      if (!start && rest.split('/').length < 3) return match; // "/s" or "and /or": not a path
      const parts = rest
        .split('/')
        .slice(1)
        .map((part) => part.replace(/^\./, 'dot '));
      const head = start === '~' ? 'tilde ' : start === '.' ? 'dot ' : start === '..' ? 'dot dot ' : '';
      return `${before}${head}slash ${parts.join(' slash ')}`;
    },
  );
  const extensions = Object.keys(FILE_EXTENSIONS).join('|');
  s = s.replace(
    new RegExp(`(^|[\\s(“"'\`])([A-Za-z_][\\w-]*)\\.(${extensions})(?=$|[\\s,;:!?)”"'\`]|\\.(?:\\s|$))`, 'g'),
    (_m, before: string, name: string, extension: string) => `${before}${name} dot ${FILE_EXTENSIONS[extension]}`,
  );

  // HTTP status codes: "a 503 error" is "five oh three", "a 500 error" "five hundred".
  s = s.replace(
    /\b(?:(HTTP|status|code)\s+)?([1-5]\d\d)(?=\s+(?:error|errors|status|response|responses|code|redirect|page)\b)/g,
    (_m, before: string | undefined, code: string) => `${before ? `${before} ` : ''}${statusCodeWords(code)}`,
  );
  s = s.replace(
    /\b(HTTP|status|code)\s+([1-5]\d\d)\b(?![.,]\d)/g,
    (_m, before: string, code: string) => `${before} ${statusCodeWords(code)}`,
  );

  // Versions: v1.2.3, 3.12.1, 1.0.0-beta.2, "Python 3.12".
  s = s.replace(
    new RegExp(`\\b[vV](\\d+(?:\\.\\d+)*)${PRERELEASE}(?![\\w.]|\\.\\d)`, 'g'),
    (_m, version: string, label?: string, n?: string) => `version ${versionWords(version)}${prereleaseWords(label, n)}`,
  );
  s = s.replace(/\b(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\b(?!\.\d)/g, (_m, ...parts: string[]) =>
    parts
      .slice(0, 4)
      .map((p) => numberToWords(p))
      .join(' dot '),
  );
  s = s.replace(
    new RegExp(`\\b(\\d+\\.\\d+\\.\\d+(?:\\.\\d+)?)${PRERELEASE}\\b(?!\\.\\d)`, 'g'),
    (_m, version: string, label?: string, n?: string) => `${versionWords(version)}${prereleaseWords(label, n)}`,
  );
  s = s.replace(/\b([A-Za-z][\w.]*)\s+(\d+)\.(\d+)\b(?!\.\d)/g, (match, word: string, major: string, minor: string) =>
    VERSION_BEFORE.has(word.toLowerCase()) ? `${word} ${numberToWords(major)} point ${numberToWords(minor)}` : match,
  );

  // Phone numbers, before their dashes are read as ranges: +1 (555) 123-4567, 555-123-4567, +44 20 7946 0958.
  s = s.replace(
    /(^|[\s(:])(\+\d{1,3}(?:[\s.-]?\(\d{1,4}\))?(?:[\s.-]\d{2,5}){2,4})(?=$|[\s,.;)])/g,
    (_m, before: string, phone: string) => `${before}${phoneWords(phone)}`,
  );
  s = s.replace(
    /(^|[\s:])((?:\(\d{3}\)\s?|\b\d{3}[-.])\d{3}[-.]\d{4})\b/g,
    (_m, before: string, phone: string) => `${before}${phoneWords(phone)}`,
  );

  // Identifiers: remoteTimeoutMs, MAX_RETRIES, snake_case, XMLHttpRequest, arm64 (after names and versions).
  s = s.replace(/(?<![\w@./-])[A-Za-z_][A-Za-z0-9_]*[A-Za-z0-9](?![\w@]|\.\w)/g, (token) =>
    isIdentifier(token) ? identifierWords(token) : token,
  );

  // Money by currency code or prefix: US$1.9 billion, USD 5, 5 EUR.
  const codes = Object.keys(CURRENCY_PREFIXES).map(escapeRegExp).join('|');
  s = s.replace(
    new RegExp(`(?<![\\w$])(${codes})\\s?(\\d[\\d,]*(?:\\.\\d+)?)${MAGNITUDE}`, 'g'),
    (_m, code: string, amount: string, magnitude?: string) => {
      const [one, many] = CURRENCY_PREFIXES[code]!;
      return `${amountWords(amount)}${magnitudeWord(magnitude)} ${amount === '1' && !magnitude ? one : many}`;
    },
  );
  s = s.replace(
    new RegExp(
      `\\b(\\d[\\d,]*(?:\\.\\d+)?)${MAGNITUDE}\\s(${Object.keys(CURRENCY_PREFIXES)
        .filter((c) => /^[A-Z]{3}$/.test(c))
        .join('|')})\\b`,
      'g',
    ),
    (_m, amount: string, magnitude: string | undefined, code: string) => {
      const [one, many] = CURRENCY_PREFIXES[code]!;
      return `${amountWords(amount)}${magnitudeWord(magnitude)} ${amount === '1' && !magnitude ? one : many}`;
    },
  );

  // Ranges whose dash would otherwise be lost or misread: $5-10, $5–$10, 5-10%, 2010-2015, 2010–15.
  const CURRENCY_NAMES: Record<string, string> = { $: 'dollars', '€': 'euros', '£': 'pounds', '¥': 'yen' };
  s = s.replace(
    new RegExp(`([$€£¥])(\\d[\\d,]*(?:\\.\\d+)?)\\s?(?:[-–]|to)\\s?\\1?(\\d[\\d,]*(?:\\.\\d+)?)${MAGNITUDE}`, 'g'),
    (_m, symbol: string, low: string, high: string, magnitude?: string) =>
      `${amountWords(low)} to ${amountWords(high)}${magnitudeWord(magnitude)} ${CURRENCY_NAMES[symbol]}`,
  );
  s = s.replace(
    /\b(\d+(?:\.\d+)?)\s?[-–]\s?(\d+(?:\.\d+)?)\s?%/g,
    (_m, low: string, high: string) => `${amountWords(low)} to ${amountWords(high)} percent`,
  );
  s = s.replace(
    /\b(1[1-9]\d\d|20\d\d)\s?[-–]\s?(\d\d|1[1-9]\d\d|20\d\d)\b(?![-–]\d)/g,
    (match, first: string, second: string) => {
      const end = Number(fullYear(first, second));
      return end > Number(first) ? `${yearWords(Number(first))} to ${yearWords(end)}` : match;
    },
  );

  // Signs: -5°C, −3, +2%, 50 ± 2.
  s = s.replace(/\s?±\s?/g, ' plus or minus ');
  s = s.replace(/(^|[\s([{=:,;])[-−](?=\d)/g, '$1minus ');
  s = s.replace(/(^|[\s([{=:,;])\+(?=\d)/g, '$1plus ');

  // Operators between numbers or symbols: 5 * 3, 4 × 2, x^2, 2**10, 10 / 2, a != b, x ≤ y.
  s = s.replace(
    /\b([A-Za-z]|\d+(?:\.\d+)?)\s?(?:\^|\*\*)\s?(\d+|[a-z])\b/g,
    (_m, base: string, exponent: string) => `${base} ${powerWords(exponent)}`,
  );
  s = s.replace(/(\d|\b[a-z])\s?[*×]\s?(?=\d|[a-z]\b)/g, '$1 times ');
  s = s.replace(/(\d)\s[/÷]\s(?=\d)/g, '$1 divided by ');
  s = s.replace(/\s(?:!=|≠)\s/g, ' is not equal to ').replace(/\s==\s/g, ' equals ');
  s = s.replace(/\s(?:<=|≤)\s/g, ' is at most ').replace(/\s(?:>=|≥)\s/g, ' is at least ');
  s = s
    .replace(/\s<\s/g, ' is less than ')
    .replace(/\s>\s/g, ' is greater than ')
    .replace(/\s?≈\s?/g, ' approximately ');

  // Fractions: 1/3, 3/4, 2/3 (dates like 3/4/2024 and paths are left alone).
  s = s.replace(
    /(^|[^\w/.])(\d{1,3})\/(\d{1,4})(?![\w/]|\.\w)/g,
    (match, before: string, top: string, bottom: string) => {
      const words = fractionWords(top, bottom);
      return words ? `${before}${words}` : match;
    },
  );

  // Roman numerals after names: World War II, Henry VIII, Part I (the pronoun "I" stays a pronoun).
  s = s.replace(/\b([A-Z][a-z]+)\s+([IVXL]+)(?=$|[\s,.;:!?)'’])/g, (match, word: string, numeral: string) => {
    if (!ROMAN.test(numeral) || numeral === 'XL') return match;
    const cardinal = ROMAN_CARDINAL_BEFORE.has(word.toLowerCase());
    if (numeral.length === 1 && !cardinal) return match;
    const value = romanValue(numeral);
    return `${word} ${cardinal ? numberToWords(value) : `the ${ordinalWords(value)}`}`;
  });
  return s;
}

/** After the number rules: all-capital words, and pauses at dashes and ellipses. */
export function normalizeLate(text: string): string {
  let s = text;
  s = s.replace(/\b([A-Z]{2,})(s?)\b/g, (_m, word: string, plural: string) => {
    const said = acronymWords(word);
    if (!plural) return said;
    return said.includes(' ') || said === spellLetters(word) ? `${said}'s` : `${said}s`;
  });
  // Flite makes no pause at a dash or an ellipsis; a comma or a period does.
  s = s.replace(/\s*(?:…|\.\.\.)\s*(?=$|["”’')\s]*$)/g, '.');
  s = s.replace(/\s*(?:…|\.\.\.)\s*/g, ', ');
  s = s.replace(/\s*(?:—|--)\s*/g, ', ').replace(/\s+[–-]\s+/g, ', ');
  s = s.replace(/,\s*([,.!?;:])/g, '$1').replace(/^\s*,\s*/, '');
  return s;
}
