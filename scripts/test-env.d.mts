// Types of test-env.mjs (plain JavaScript: it runs before anything is built).
export const CODE_SERVER_VERSION: string;
export function cacheRoot(): string;
export function codeServerDir(): string;
export function vscodeServerMain(): string;
export function chromiumPath(): string;
export function ensureTestEnvironment(): void;
export function ensurePostgres(): void;
