// The tables behind technical text for speech: how acronyms, short names and identifier parts are said. Entries
// are respelled for Flite, which spells out any all-capital word and guesses at unknown ones; a lower-case
// respelling ("jay son") is what it pronounces as the word people say.

/** Acronyms people say as words, with the spelling Flite pronounces that way. */
export const SAID_AS_WORDS: Record<string, string> = {
  NASA: 'nasa', NATO: 'nato', UNESCO: 'you nesco', UNICEF: 'unicef', LASER: 'laser', RADAR: 'radar', SCUBA: 'scuba',
  JPEG: 'jay peg', JPG: 'jay peg', GIF: 'gif', PNG: 'ping', JSON: 'jay son', YAML: 'yammel', ASCII: 'askey',
  CAPTCHA: 'captcha', COVID: 'covid', OPEC: 'opec', FIFA: 'feefa', NAFTA: 'nafta', AIDS: 'aids', SIM: 'sim', PIN: 'pin',
  RAM: 'ram', ROM: 'rom', LAN: 'lan', WAN: 'wan', GUI: 'gooey', ASAP: 'ay sap', IKEA: 'ikea', LEGO: 'lego', OK: 'okay',
  TOML: 'tommel', REST: 'rest', CRUD: 'crud', SWAT: 'swat', ZIP: 'zip', MIDI: 'middy', WIFI: 'why fye', SQL: 'sequel',
  GNU: 'gnoo', WASM: 'wazzem', WASI: 'wazzy', NATS: 'nats', CORS: 'cors',
  POSIX: 'posix', UNIX: 'unix', LINUX: 'linux', SCSI: 'scuzzy', SATA: 'sata', NAS: 'nas', DAO: 'dow', FAQ: 'fack',
  GIS: 'G I S', LIDAR: 'lidar', SONAR: 'sonar', UEFI: 'U E F I', YAGNI: 'yagnee', WYSIWYG: 'wizzywig', TODO: 'to do',
  README: 'read me', FIXME: 'fix me', EOF: 'E O F', LOL: 'L O L', CAPEX: 'capex', OPEX: 'opex', SPA: 'spa',
};

/** Names written in mixed case or with dots and digits, and how they are said. */
export const NAMES: Record<string, string> = {
  k8s: 'kubernetes', K8s: 'kubernetes', i18n: 'internationalization', l10n: 'localization', a11y: 'accessibility',
  'Node.js': 'node jay ess', 'node.js': 'node jay ess', 'Vue.js': 'view jay ess', 'Next.js': 'next jay ess',
  'React.js': 'react jay ess', 'Express.js': 'express jay ess', 'Deno': 'deeno', '.NET': 'dot net', 'ASP.NET': 'A S P dot net',
  iOS: 'eye O S', macOS: 'mac O S', iPadOS: 'eye pad O S', iPhone: 'eye phone', iPad: 'eye pad', npm: 'N P M', pnpm: 'P N P M',
  nginx: 'engine X', PostgreSQL: 'postgres', MySQL: 'my sequel', SQLite: 'sequel light', GitHub: 'git hub', GitLab: 'git lab',
  JavaScript: 'java script', TypeScript: 'type script', CommonJS: 'common J S', WebAssembly: 'web assembly', VS: 'V S',
  stdin: 'standard in', stdout: 'standard out', stderr: 'standard error', sudo: 'sue doo', kubectl: 'cube control',
  GraphQL: 'graph Q L', YouTube: 'you tube', eBay: 'ee bay', IPv4: 'I P version four', IPv6: 'I P version six',
  UTF: 'U T F', 'UTF-8': 'U T F eight', 'utf-8': 'U T F eight', utf8: 'U T F eight', mp3: 'M P three', MP3: 'M P three',
  mp4: 'M P four', MP4: 'M P four', x86: 'X eighty-six', x64: 'X sixty-four', arm64: 'arm sixty-four', '2FA': 'two factor',
  '3D': 'three D', '2D': 'two D', '5G': 'five G', '4G': 'four G', '4K': 'four K', '8K': 'eight K', '24/7': 'twenty-four seven',
  '9/11': 'nine eleven', '50/50': 'fifty-fifty', 'Wi-Fi': 'why fye', 'e-mail': 'email', SaaS: 'sass', OAuth: 'oh auth',
};

/** Words written in capitals for emphasis or as a heading: said as words, not letter by letter. */
export const CAPITALIZED_WORDS = new Set([
  'NOT', 'AND', 'THE', 'ALL', 'NEW', 'FREE', 'NOTE', 'WARNING', 'NEVER', 'MUST', 'SHOULD', 'MAY', 'YOU', 'YOUR', 'ONLY',
  'STOP', 'NOW', 'DO', 'DONT', 'WILL', 'CAN', 'BUT', 'FOR', 'WITH', 'THIS', 'THAT', 'ARE', 'IS', 'NO', 'YES', 'ON', 'OFF',
  'ERROR', 'INFO', 'DEBUG', 'WARN', 'FATAL', 'TRUE', 'FALSE', 'NULL', 'NONE', 'MAX', 'MIN', 'SELECT', 'FROM', 'WHERE',
  'INSERT', 'UPDATE', 'DELETE', 'CREATE', 'TABLE', 'INTO', 'VALUES', 'JOIN', 'ORDER', 'GROUP', 'BY', 'LIMIT', 'GET',
  'POST', 'PUT', 'PATCH', 'HEAD', 'OPTIONS', 'IMPORTANT', 'UPDATE', 'BREAKING', 'CHANGE', 'CHANGES', 'DONE', 'OR', 'IF',
  'RETRIES', 'TIMEOUT', 'SIZE', 'PATH', 'HOME', 'USER', 'PORT', 'HOST', 'TOKEN', 'KEY', 'LEVEL', 'MODE', 'DIR', 'FILE',
  'VERSION', 'COUNT', 'LENGTH', 'DEFAULT', 'ENV', 'CONFIG', 'DATA', 'CACHE', 'BUFFER', 'LOG', 'TEST', 'DEV', 'PROD',
]);

/** Parts of identifiers (camelCase, snake_case) that are abbreviations: how each is said. */
export const IDENTIFIER_PARTS: Record<string, string> = {
  ms: 'milliseconds', ns: 'nanoseconds', us: 'microseconds', sec: 'seconds', secs: 'seconds', num: 'number',
  str: 'string', len: 'length', fn: 'function', func: 'function', cfg: 'config', conf: 'config', env: 'environment',
  dir: 'directory', dirs: 'directories', src: 'source', dst: 'destination', dest: 'destination', tmp: 'temp',
  args: 'arguments', arg: 'argument', params: 'parameters', param: 'parameter', req: 'request', res: 'response',
  err: 'error', msg: 'message', idx: 'index', ctx: 'context', btn: 'button', img: 'image', db: 'D B', id: 'I D',
  ids: 'I Ds', url: 'U R L', urls: 'U R Ls', uri: 'U R I', api: 'A P I', http: 'H T T P', https: 'H T T P S',
  html: 'H T M L', css: 'C S S', io: 'I O', ui: 'U I', os: 'O S', cpu: 'C P U', gpu: 'G P U', sdk: 'S D K', cli: 'C L I',
  xml: 'X M L', tls: 'T L S', ssl: 'S S L', js: 'J S', ts: 'T S', dom: 'dom', json: 'jay son', yaml: 'yammel',
  sql: 'sequel', utf: 'U T F', ascii: 'askey', max: 'max', min: 'min', auth: 'auth', async: 'a sync', init: 'in it',
  util: 'util', utils: 'utils', lib: 'lib', pkg: 'package', deps: 'dependencies', dep: 'dependency', repo: 'repo',
  prev: 'previous', curr: 'current', cur: 'current', gc: 'G C', rx: 'R X', tx: 'T X', ok: 'okay', nan: 'not a number',
};

/** Words before a Roman numeral that make it a cardinal number ("World War II", "Part IV"), not a regnal one. */
export const ROMAN_CARDINAL_BEFORE = new Set([
  'war', 'part', 'chapter', 'volume', 'vol', 'act', 'phase', 'episode', 'book', 'type', 'class', 'level', 'stage',
  'section', 'article', 'title', 'appendix', 'bowl', 'mark', 'mk', 'series', 'grade', 'tier', 'round', 'schedule',
  'division', 'league', 'vatican', 'rocky', 'apollo', 'saturn', 'gemini', 'final', 'fantasy',
]);

/** Denominators said as words: 2 -> half, 3 -> third; [singular, plural]. */
export const DENOMINATORS: Record<number, [string, string]> = {
  2: ['half', 'halves'], 3: ['third', 'thirds'], 4: ['quarter', 'quarters'], 5: ['fifth', 'fifths'], 6: ['sixth', 'sixths'],
  7: ['seventh', 'sevenths'], 8: ['eighth', 'eighths'], 9: ['ninth', 'ninths'], 10: ['tenth', 'tenths'],
  12: ['twelfth', 'twelfths'], 16: ['sixteenth', 'sixteenths'], 100: ['hundredth', 'hundredths'],
};

/** Currency codes and prefixes ("US$", "USD") -> the currency's name, singular and plural. */
export const CURRENCY_PREFIXES: Record<string, [string, string]> = {
  US$: ['US dollar', 'US dollars'], A$: ['Australian dollar', 'Australian dollars'], C$: ['Canadian dollar', 'Canadian dollars'],
  CA$: ['Canadian dollar', 'Canadian dollars'], NZ$: ['New Zealand dollar', 'New Zealand dollars'],
  HK$: ['Hong Kong dollar', 'Hong Kong dollars'], S$: ['Singapore dollar', 'Singapore dollars'], R$: ['real', 'reais'],
  USD: ['US dollar', 'US dollars'], EUR: ['euro', 'euros'], GBP: ['pound', 'pounds'], JPY: ['yen', 'yen'],
  CHF: ['Swiss franc', 'Swiss francs'], CAD: ['Canadian dollar', 'Canadian dollars'], AUD: ['Australian dollar', 'Australian dollars'],
  CNY: ['yuan', 'yuan'], INR: ['rupee', 'rupees'], SEK: ['Swedish krona', 'Swedish kronor'], BTC: ['bitcoin', 'bitcoin'],
};

/** Words before a number that make "3.12" or "20.10" a version ("Python 3.12"), read part by part. */
export const VERSION_BEFORE = new Set([
  'version', 'versions', 'release', 'python', 'node', 'java', 'ruby', 'go', 'php', 'perl', 'rust', 'typescript',
  'javascript', 'ecmascript', 'es', 'kotlin', 'swift', 'scala', 'dart', 'flutter', 'react', 'vue', 'angular', 'django',
  'rails', 'linux', 'kernel', 'ubuntu', 'debian', 'fedora', 'macos', 'ios', 'android', 'windows', 'chrome', 'firefox',
  'safari', 'edge', 'electron', 'vs', 'code', 'npm', 'yarn', 'pnpm', 'deno', 'bun', 'gcc', 'clang', 'llvm', 'cmake',
  'postgres', 'postgresql', 'mysql', 'redis', 'mongodb', 'sqlite', 'openssl', 'tls', 'http', 'html', 'css', 'unicode',
  'gradle', 'maven', 'webpack', 'vite', 'esbuild', 'babel', 'jest', 'mocha', 'docker', 'kubernetes', 'helm', 'terraform',
  'git', 'bash', 'zsh', 'lts',
]);
