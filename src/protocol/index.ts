// The wire contract between the client (src/api, the extension, the command line) and the engine: models, text and
// URL rules, job states, error codes and the submission schema. Plain TypeScript and zod: no vscode, no node:*.
export * from './binary';
export * from './errors';
export * from './models';
export * from './status';
export * from './submission';
export * from './text';
export * from './url';
