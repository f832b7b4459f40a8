// British spellings said as Flite says the American ones. Flite's lexicon is American: it has "harbour" but not
// "harbours", and guesses the rest from the letters, often wrongly ("neighbours" n ey b ao er z, "metre" m eh t er,
// "organise" ao r g ax n ax s, "humour" … m ao r). The spoken text uses the American spelling of the same word; the
// transcript keeps the text as written. Stems are listed, not suffixes guessed: "hour", "genre", "promise" stay.
const VARIANTS: [RegExp, string][] = [
  [
    /^(harb|neighb|col|flav|hon|lab|behavi|fav|hum|rum|arm|endeav|od|vap|rig|sav|vig|parl|clam|splend|val|cand|ferv|savi|tum)our(s|ed|ing|ite|ites|hood|hoods|ful|less|able|er|ers|y)?$/,
    '$1or$2',
  ],
  [/^(cent|met|kilomet|centimet|millimet|lit|millilit|theat|fib|calib|spect|somb|sab|meag|lust)re(s)?$/, '$1er$2'],
  [/^(cent|lust)red$/, '$1ered'],
  [
    /^(organi|reali|recogni|apologi|summari|optimi|minimi|maximi|prioriti|authori|categori|emphasi|normali|speciali|standardi|synchroni|utili|visuali|capitali|critici|customi|finali|initiali|memori|moderni|moneti|seriali|deseriali|saniti|randomi|tokeni|paralleli|centrali|decentrali|digiti|stabili|mobili|globali|locali|personali|characteri|economi|harmoni|legali|neutrali|penali|sociali|subsidi|sympathi|symboli|theori|vapori|agoni|idoli|itemi|motori|patroni|scrutini|terrori|publici|energi|equali|fertili|fossili|galvani|hypnoti|immuni|jeopardi|liberali|materiali|miniaturi|pasteuri|polari|rationali|revitali|sensiti|sterili|tranquili|vandali|verbali|victimi)s(e|es|ed|ing|ation|ations|er|ers)$/,
    '$1z$2',
  ],
  // Not "analyses": also the plural of "analysis", said differently.
  [/^(ana|cata|para|electro|hydro)lys(e|ed|ing)$/, '$1lyz$2'],
  [
    /^(travel|model|cancel|label|signal|level|fuel|total|channel|funnel|marshal|tunnel|counsel|dial|shovel|quarrel|marvel|pedal|rival|unravel|jewel)l(ed|ing|er|ers)$/,
    '$1$2',
  ],
  [/^(catalog|analog|prolog|epilog|monolog)ue(s)?$/, '$1$2'],
  [/^(defen|offen|licen|preten)ce(s)?$/, '$1se$2'],
  [/^grey(s|er|est|ish|ed|ing)?$/, 'gray$1'],
  [/^programme(s)?$/, 'program$1'],
  [/^tyre(s)?$/, 'tire$1'],
  [/^kerb(s)?$/, 'curb$1'],
];

/** One word (letters only) in its American spelling, or as it is; lower case in, lower case out. */
export function americanSpelling(word: string): string {
  for (const [pattern, replacement] of VARIANTS) if (pattern.test(word)) return word.replace(pattern, replacement);
  return word;
}

/**
 * Every British spelling in a text said the American way, keeping a capital first letter. Words in capitals stay as
 * they are: they are read by the acronym rules, which "COLOR" (five letters) would turn into spelled letters.
 */
export function sayAmerican(text: string): string {
  return text.replace(/\b[A-Za-z]{4,}\b/g, (word) => {
    const lower = word.toLowerCase();
    const american = americanSpelling(lower);
    if (american === lower || word === word.toUpperCase()) return word;
    return word[0] === word[0]!.toUpperCase() ? american[0]!.toUpperCase() + american.slice(1) : american;
  });
}
