// Types of test-env.mjs (plain JavaScript: it runs before anything is built).
export const CODE_SERVER_VERSION: string;
export function cacheRoot(): string;
export function codeServerDir(): string;
export function vscodeServerMain(): string;
export function chromiumPath(): string;
export function installAllowed(): boolean;
export function ensureTestEnvironment(options?: { install?: boolean }): void;
export function ensurePostgres(options?: { install?: boolean }): void;
