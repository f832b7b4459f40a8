// Words Flite's lexicon lacks or gets wrong, with the pronunciation people use: a lexicon addendum the synthesis
// worker hands to Flite (`-add_lex`). A pronunciation here keeps the word itself in the spoken text (and in what the
// listening bench compares against); a respelling ("time out") would change the words. Phones are Flite's (CMU
// ARPAbet, vowels with stress 0 or 1: Flite drops a vowel marked 2). Each entry was said wrong in Flite's own reading
// (its segments): "timeout" t ih m aw t, "kubernetes" k ax b er n iy t s, "retries" r iy t r iy z, "git" jh ih t,
// "github" jh ih th ax b, "tilde" t ih l d, "schema" sh k m ax. British spellings are not here: the spoken text says
// them the American way (spelling.ts).
export const LEXICON: Record<string, string> = {
  timeout: 't ay1 m aw0 t',
  timeouts: 't ay1 m aw0 t s',
  kubernetes: 'k uw0 b er0 n eh1 t iy0 z',
  retries: 'r iy0 t r ay1 z',
  git: 'g ih1 t',
  github: 'g ih1 t hh ax0 b',
  tilde: 't ih1 l d ax0',
  tuple: 't uw1 p ax0 l',
  tuples: 't uw1 p ax0 l z',
  daemon: 'd iy1 m ax0 n',
  daemons: 'd iy1 m ax0 n z',
  schema: 's k iy1 m ax0',
  schemas: 's k iy1 m ax0 z',
  plugin: 'p l ah1 g ih0 n',
  plugins: 'p l ah1 g ih0 n z',
  login: 'l ao1 g ih0 n',
  logins: 'l ao1 g ih0 n z',
  typescript: 't ay1 p s k r ih0 p t',
  javascript: 'jh aa1 v ax0 s k r ih0 p t',
  toolchain: 't uw1 l ch ey0 n',
  changelog: 'ch ey1 n jh l ao0 g',
  microservice: 'm ay1 k r ow0 s er0 v ax0 s',
  microservices: 'm ay1 k r ow0 s er0 v ax0 s ax0 z',
  lifecycle: 'l ay1 f s ay0 k ax0 l',
  localhost: 'l ow1 k ax0 l hh ow0 s t',
  hostname: 'hh ow1 s t n ey0 m',
  postgres: 'p ow1 s t g r eh0 s',
  enum: 'iy1 n ax0 m',
  async: 'ey1 s ih0 ng k',
  debian: 'd eh1 b iy0 ax0 n',
};

/** The addendum in Flite's format: `"headword" : phone phone …`, one a line. */
export function fliteLexicon(entries: Record<string, string> = LEXICON): string {
  return Object.entries(entries)
    .map(([word, phones]) => `${word} : ${phones}\n`)
    .join('');
}
