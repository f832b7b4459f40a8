// Text for speech: the written sentence -> the words the synthesizer should say. Numbers, years, dates, times,
// money, percentages, units, ordinals, abbreviations, symbols, URLs and e-mail addresses become words; the
// transcript keeps the written sentence, so read-along highlighting matches the text.

import { normalizeLate, normalizeTechnical } from './normalize';
import { sayLongTokens } from './normalize/long-tokens';
import { sayAmerican } from './normalize/spelling';
import { numberToWords, ONES, ordinalWords, spellDigits, TENS, yearWords } from './normalize/numbers';

export { numberToWords, ordinalWords, spellDigits, yearWords } from './normalize/numbers';

function decimalWords(whole: string, fraction: string): string {
  return `${numberToWords(whole.replace(/,/g, '') || '0')} point ${spellDigits(fraction)}`;
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const MONTH_PATTERN =
  '(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\\.?';

function monthName(short: string): string {
  return MONTHS.find((m) => m.toLowerCase().startsWith(short.toLowerCase().slice(0, 3))) ?? short;
}

const CURRENCIES: Record<string, [string, string, string, string]> = {
  $: ['dollar', 'dollars', 'cent', 'cents'],
  '€': ['euro', 'euros', 'cent', 'cents'],
  '£': ['pound', 'pounds', 'penny', 'pence'],
  '¥': ['yen', 'yen', '', ''],
};

const MAGNITUDES: Record<string, string> = {
  k: 'thousand',
  m: 'million',
  mn: 'million',
  bn: 'billion',
  b: 'billion',
  t: 'trillion',
  thousand: 'thousand',
  million: 'million',
  billion: 'billion',
  trillion: 'trillion',
};

function amountWords(amount: string): string {
  const [whole, fraction] = amount.replace(/,/g, '').split('.');
  return fraction ? decimalWords(whole ?? '0', fraction) : numberToWords(whole ?? '0');
}

function moneyWords(symbol: string, amount: string, magnitude: string | undefined): string {
  const [one, many, centOne, centMany] = CURRENCIES[symbol]!;
  const clean = amount.replace(/,/g, '');
  if (magnitude) return `${amountWords(clean)} ${MAGNITUDES[magnitude.toLowerCase()]} ${many}`;
  const [whole = '0', fraction] = clean.split('.');
  const wholeWords = `${numberToWords(whole)} ${whole === '1' ? one : many}`;
  if (!fraction || !centOne || /^0+$/.test(fraction)) return wholeWords;
  const cents = Number(fraction.padEnd(2, '0').slice(0, 2));
  const centWords = `${numberToWords(cents)} ${cents === 1 ? centOne : centMany}`;
  return whole === '0' ? centWords : `${wholeWords} and ${centWords}`;
}

/** Units after a number: the symbol -> [singular, plural]. */
const UNITS: Record<string, [string, string]> = {
  km: ['kilometer', 'kilometers'],
  m: ['meter', 'meters'],
  cm: ['centimeter', 'centimeters'],
  mm: ['millimeter', 'millimeters'],
  mi: ['mile', 'miles'],
  ft: ['foot', 'feet'],
  in: ['inch', 'inches'],
  kg: ['kilogram', 'kilograms'],
  g: ['gram', 'grams'],
  mg: ['milligram', 'milligrams'],
  lb: ['pound', 'pounds'],
  lbs: ['pound', 'pounds'],
  oz: ['ounce', 'ounces'],
  l: ['liter', 'liters'],
  ml: ['milliliter', 'milliliters'],
  mph: ['mile per hour', 'miles per hour'],
  'km/h': ['kilometer per hour', 'kilometers per hour'],
  kph: ['kilometer per hour', 'kilometers per hour'],
  ms: ['millisecond', 'milliseconds'],
  s: ['second', 'seconds'],
  sec: ['second', 'seconds'],
  min: ['minute', 'minutes'],
  h: ['hour', 'hours'],
  hr: ['hour', 'hours'],
  hrs: ['hours', 'hours'],
  kb: ['kilobyte', 'kilobytes'],
  mb: ['megabyte', 'megabytes'],
  gb: ['gigabyte', 'gigabytes'],
  tb: ['terabyte', 'terabytes'],
  kib: ['kibibyte', 'kibibytes'],
  mib: ['mebibyte', 'mebibytes'],
  gib: ['gibibyte', 'gibibytes'],
  hz: ['hertz', 'hertz'],
  khz: ['kilohertz', 'kilohertz'],
  mhz: ['megahertz', 'megahertz'],
  ghz: ['gigahertz', 'gigahertz'],
  kw: ['kilowatt', 'kilowatts'],
  w: ['watt', 'watts'],
  kwh: ['kilowatt hour', 'kilowatt hours'],
  v: ['volt', 'volts'],
  '°c': ['degree Celsius', 'degrees Celsius'],
  '°f': ['degree Fahrenheit', 'degrees Fahrenheit'],
  '°': ['degree', 'degrees'],
  x: ['times', 'times'],
};

const ABBREVIATIONS: [RegExp, string][] = [
  [/\bDr\.(?=\s+[A-Z])/g, 'Doctor'],
  [/\bMr\.(?=\s)/g, 'Mister'],
  [/\bMrs\.(?=\s)/g, 'Missus'],
  [/\bMs\.(?=\s)/g, 'Miz'],
  [/\bProf\.(?=\s)/g, 'Professor'],
  [/\bSt\.(?=\s+[A-Z])/g, 'Saint'],
  [/\bJr\./g, 'Junior'],
  [/\bSr\./g, 'Senior'],
  [/\be\.g\.,?/gi, 'for example,'],
  [/\bi\.e\.,?/gi, 'that is,'],
  [/\betc\.(?=\s+[A-Z"“]|\s*$)/g, 'et cetera.'],
  [/\betc\./gi, 'et cetera'],
  [/\bvs\.?(?=\s)/gi, 'versus'],
  [/\bapprox\./gi, 'approximately'],
  [/\bcf\./gi, 'compare'],
  [/\bet al\./gi, 'and others'],
  [/\bNo\.\s*(?=\d)/g, 'number '],
  [/\bFig\.\s*(?=\d)/gi, 'figure '],
  [/\bU\.S\.A?\./g, 'U S'],
  [/\bU\.K\./g, 'U K'],
  [/\bPh\.D\./g, 'P H D'],
];

function hostWords(host: string): string {
  return host
    .replace(/^www\./i, '')
    .split('.')
    .map((part) => part.replace(/-/g, ' dash '))
    .join(' dot ');
}

/** "a.m." at the very end of a sentence also ends the sentence: keep its period for the synthesizer's intonation. */
function sentenceEndAfter(match: string, at: number, all: string): string {
  return match.endsWith('.') && /^\s*(?:$|["”’')]?\s*$)/.test(all.slice(at + match.length)) ? '.' : '';
}

/** Turns one written sentence into the words to synthesize. */
export function toSpoken(sentence: string): string {
  let s = ` ${sentence} `;

  // Addresses first, before their dots and slashes are read as anything else.
  s = s.replace(/\b[\w.+-]+@([\w-]+\.)+[a-z]{2,}\b/gi, (email) => {
    const [user = '', domain = ''] = email.split('@');
    return `${user.replace(/[._+-]/g, (c) => ({ '.': ' dot ', _: ' underscore ', '+': ' plus ', '-': ' dash ' })[c] ?? c)} at ${hostWords(domain)}`;
  });
  s = s.replace(/\bhttps?:\/\/([^\s/?#)]+)[^\s)]*/gi, (_url, host: string) => `a link to ${hostWords(host)}`);
  s = s.replace(/\bwww\.([\w-]+\.)+[a-z]{2,}[^\s)]*/gi, (url) => `a link to ${hostWords(url.split('/')[0]!)}`);

  // Codes and blobs (a hash, base64, a 50,000-digit number) are named, not spelled for minutes.
  s = sayLongTokens(s);
  for (const [pattern, words] of ABBREVIATIONS) s = s.replace(pattern, words);
  s = normalizeTechnical(s);
  s = sayAmerican(s);

  // Dates: 2024-03-05, March 5, 2024, 5 March 2024, March 2024.
  s = s.replace(/\b(\d{4})-(\d{2})-(\d{2})\b/g, (match, y: string, m: string, d: string) => {
    const month = MONTHS[Number(m) - 1];
    return month && Number(d) >= 1 && Number(d) <= 31
      ? `${month} ${ordinalWords(Number(d))}, ${yearWords(Number(y))}`
      : match;
  });
  s = s.replace(
    new RegExp(`\\b${MONTH_PATTERN}\\s+(\\d{1,2})(?:st|nd|rd|th)?(?:,\\s*(\\d{4}))?\\b`, 'g'),
    (_m, month: string, day: string, year?: string) =>
      `${monthName(month)} ${ordinalWords(Number(day))}${year ? `, ${yearWords(Number(year))}` : ''}`,
  );
  s = s.replace(
    new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+${MONTH_PATTERN}(?:,?\\s+(\\d{4}))?\\b`, 'g'),
    (_m, day: string, month: string, year?: string) =>
      `the ${ordinalWords(Number(day))} of ${monthName(month)}${year ? `, ${yearWords(Number(year))}` : ''}`,
  );
  s = s.replace(
    new RegExp(`\\b${MONTH_PATTERN}\\s+(\\d{4})\\b`, 'g'),
    (_m, month: string, year: string) => `${monthName(month)} ${yearWords(Number(year))}`,
  );

  // Times: 10:30, 9:05 am, 14:00.
  s = s.replace(
    /\b(\d{1,2}):(\d{2})(?:\s*([ap])\.?m\.?)?(?=\W)/gi,
    (match: string, h: string, min: string, ap: string | undefined, at: number, all: string) => {
      const minutes = Number(min);
      const minuteWords =
        minutes === 0 ? (ap ? '' : ' hundred') : minutes < 10 ? ` oh ${ONES[minutes]}` : ` ${numberToWords(minutes)}`;
      return `${numberToWords(Number(h))}${minuteWords}${ap ? ` ${ap.toUpperCase()} M` : ''}${sentenceEndAfter(match, at, all)}`;
    },
  );
  s = s.replace(
    /\b(\d{1,2})\s*([ap])\.?m\.?(?=\W)/gi,
    (match: string, h: string, ap: string, at: number, all: string) =>
      `${numberToWords(Number(h))} ${ap.toUpperCase()} M${sentenceEndAfter(match, at, all)}`,
  );

  // Money: $3.50, €1,200, £5m, $2.5 billion.
  s = s.replace(
    /([$€£¥])\s?(\d[\d,]*(?:\.\d+)?)(?:\s?(bn|mn|k|m|b|t|thousand|million|billion|trillion)\b)?/gi,
    (_m, symbol: string, amount: string, magnitude?: string) => moneyWords(symbol, amount, magnitude),
  );

  // Percentages, ranges, ordinals, decades.
  s = s.replace(/(\d[\d,]*(?:\.\d+)?)\s?%/g, (_m, n: string) => `${amountWords(n)} percent`);
  s = s.replace(/\b(\d+)(st|nd|rd|th)\b/gi, (_m, n: string) => ordinalWords(n));
  s = s.replace(
    /\b(1[1-9]|20)(\d)0s\b/g,
    (_m, c: string, d: string) => `${yearWords(Number(`${c}${d}0`)).replace(/y$/, 'ie')}s`,
  );
  // "the '80s": no word boundary before the apostrophe, so the space is matched and kept.
  s = s.replace(
    /(^|[\s(“"])['’](\d)0s\b/g,
    (_m, before: string, d: string) => `${before}${TENS[Number(d)]!.replace(/y$/, 'ie')}s`,
  );
  s = s.replace(/\b(\d+)\s?[–-]\s?(\d+)\b/g, (match, a: string, b: string) =>
    Number(a) < Number(b) ? `${a} to ${b}` : match,
  );

  // Numbers with units: 5 km, 3.5GB, 100 ms, 10x, 20°C.
  s = s.replace(/(\d[\d,]*(?:\.\d+)?)\s?(km\/h|°[CF]|°|[a-zA-Z]{1,3})(?![\w°])/g, (match, n: string, unit: string) => {
    const names = UNITS[unit.toLowerCase()];
    if (
      !names ||
      (unit === 'in' ||
      unit === 'm' ||
      unit === 's' ||
      unit === 'h' ||
      unit === 'g' ||
      unit === 'l' ||
      unit === 'v' ||
      unit === 'w'
        ? !/\d$/.test(n)
        : false)
    )
      return match;
    // "in", "m", "s" are also words: only expand them right after a number without space ("5m", "10s").
    if (['in', 'm', 's', 'h', 'g', 'l', 'v', 'w', 'min'].includes(unit) && /\s/.test(match)) return match;
    const plural = n.replace(/,/g, '') !== '1';
    return `${amountWords(n)} ${plural ? names[1] : names[0]}`;
  });

  // Years, then remaining numbers: decimals, grouped thousands, plain numbers.
  s = s.replace(
    /\b(in|since|by|from|until|of|year|circa|around|before|after|during|early|late|mid|summer|winter|spring|autumn|fall)\s+(1[1-9]\d\d|20\d\d)\b/gi,
    (_m, word: string, year: string) => `${word} ${yearWords(Number(year))}`,
  );
  s = s.replace(
    /(^|[^\d,.])(1[1-9]\d\d|20\d\d)(?![\d,]|\.\d)/g,
    (_m, before: string, year: string) => `${before}${yearWords(Number(year))}`,
  );
  s = s.replace(/\b(\d+)\.x\b/g, (_m, major: string) => `${numberToWords(major)} point x`);
  s = s.replace(/\b(\d{1,3}(?:,\d{3})+|\d+)\.(\d+)\b/g, (_m, whole: string, fraction: string) =>
    decimalWords(whole, fraction),
  );
  s = s.replace(/\b\d{1,3}(?:,\d{3})+\b/g, (n) => numberToWords(n.replace(/,/g, '')));
  s = s.replace(/\b\d+\b/g, (n) => (n.length > 1 && n.startsWith('0') ? spellDigits(n) : numberToWords(n)));

  // Symbols and acronyms.
  s = s
    .replace(/\bC\+\+/g, 'C plus plus')
    .replace(/\bC#/g, 'C sharp')
    .replace(/\bF#/g, 'F sharp');
  s = s
    .replace(/\s&\s/g, ' and ')
    .replace(/\s\+\s/g, ' plus ')
    .replace(/\s=\s/g, ' equals ')
    .replace(/~\s?(?=\w)/g, 'about ');
  s = s.replace(/#(\w)/g, 'number $1').replace(/@(\w)/g, 'at $1');
  s = s
    .replace(/\s?(?:->|=>|[→⇒])\s?/g, ' to ')
    .replace(/[←]/g, ' from ')
    .replace(/[*_`|<>{}[\]\\^]/g, ' ');
  s = normalizeLate(s);
  s = s.replace(/\//g, ' slash ').replace(/\s{2,}/g, ' ');
  return s.trim();
}
