// The engine's logger: a leaf that every part imports (the orchestrators never own its type).
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type Logger = (level: LogLevel, message: string) => void;
