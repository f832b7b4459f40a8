// Numbers in words: cardinals, ordinals, years, digit by digit.

export const ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
export const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const SCALES = ['', 'thousand', 'million', 'billion', 'trillion', 'quadrillion'];

function belowThousand(n: number): string {
  const parts: string[] = [];
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  if (hundreds > 0) parts.push(`${ONES[hundreds]} hundred`);
  if (rest > 0) {
    if (rest < 20) parts.push(ONES[rest]!);
    else
      parts.push(rest % 10 === 0 ? TENS[Math.floor(rest / 10)]! : `${TENS[Math.floor(rest / 10)]}-${ONES[rest % 10]}`);
  }
  return parts.join(' ');
}

/** Cardinal number in words, for whole numbers of up to 18 digits; longer ones are read digit by digit. */
export function numberToWords(value: number | bigint | string): string {
  const digits = String(value).replace(/^0+(?=\d)/, '');
  if (!/^\d+$/.test(digits)) return String(value);
  if (digits.length > 18) return spellDigits(digits);
  let n = BigInt(digits);
  if (n === 0n) return 'zero';
  const groups: string[] = [];
  let scale = 0;
  while (n > 0n) {
    const group = Number(n % 1000n);
    if (group > 0) groups.unshift(`${belowThousand(group)}${SCALES[scale] ? ` ${SCALES[scale]}` : ''}`);
    n /= 1000n;
    scale++;
  }
  return groups.join(' ');
}

export function spellDigits(digits: string): string {
  return digits
    .split('')
    .map((d) => (/\d/.test(d) ? ONES[Number(d)]! : d))
    .join(' ');
}

const ORDINAL_WORDS: Record<string, string> = {
  one: 'first',
  two: 'second',
  three: 'third',
  five: 'fifth',
  eight: 'eighth',
  nine: 'ninth',
  twelve: 'twelfth',
};

export function ordinalWords(n: number | string): string {
  const words = numberToWords(n);
  const match = /([a-z]+)$/.exec(words);
  if (!match) return words;
  const last = match[1]!;
  let ordinal: string;
  if (ORDINAL_WORDS[last]) ordinal = ORDINAL_WORDS[last];
  else if (last.endsWith('y')) ordinal = `${last.slice(0, -1)}ieth`;
  else ordinal = `${last}th`;
  return words.slice(0, words.length - last.length) + ordinal;
}

/** A year as people say it: 1990 -> nineteen ninety, 2005 -> two thousand five, 2024 -> twenty twenty-four. */
export function yearWords(year: number): string {
  if (year >= 2000 && year < 2010) return year === 2000 ? 'two thousand' : `two thousand ${ONES[year - 2000]}`;
  if (year < 1100 || year > 2099) return numberToWords(year);
  const high = Math.floor(year / 100);
  const low = year % 100;
  if (low === 0) return `${belowThousand(high)} hundred`;
  if (low < 10) return `${belowThousand(high)} oh ${ONES[low]}`;
  return `${belowThousand(high)} ${belowThousand(low)}`;
}
