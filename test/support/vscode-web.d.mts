// Types of vscode-web.mjs (plain JavaScript, because the launcher runs as an executable without a TypeScript loader).
import type { Browser, Page } from 'playwright-core';

export interface VSCodeWebOptions {
  extensionDevelopmentPath: string;
  extensionTestsPath?: string;
  folder?: string;
  env?: Record<string, string>;
  userDataDir?: string;
  settings?: Record<string, unknown>;
  onConsole?: (line: string) => void;
  verbose?: boolean;
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
}

export interface VSCodeWeb {
  origin: string;
  port: number;
  page: Page;
  browser: Browser;
  url: string;
  userDataDir: string;
  serverOutput(): string;
  open(): Promise<void>;
  close(): Promise<void>;
}

export function freePort(): Promise<number>;
export function startVSCodeWeb(options: VSCodeWebOptions): Promise<VSCodeWeb>;
