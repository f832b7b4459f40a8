// Every command of the extension: one factory per command (rust-analyzer's commands.ts pattern), each in the module
// of its concern, registered here from one table typed by src/command-ids.ts, so a command missing from the table is
// a type error (and scripts/check-commands.mjs checks package.json against it).
import * as vscode from 'vscode';
import { type CommandId, Commands } from '../command-ids';
import { clearApiKey, clearVoiceKey, setApiKey, setVoiceKey } from './api-key';
import type { CommandContext, CommandFactory } from './context';
import { convertDocument, convertSelection, convertUrl, playFromHere } from './convert';
import {
  cancelJob,
  clearFailed,
  clearFinished,
  copyJobId,
  removeJob,
  retryJob,
  revealAudio,
  showJobError,
} from './jobs';
import { openPlayer, saveAudioAs, togglePlayback } from './player';
import { addToQueue, playNext, removeFromQueue } from './queue';
import { useLocalEngine, useRemoteService } from './service';
import { openSample, showJobs, showLog } from './views';

export type { CommandContext } from './context';

const COMMANDS: Record<CommandId, CommandFactory> = {
  [Commands.convertSelection]: convertSelection,
  [Commands.convertDocument]: convertDocument,
  [Commands.convertUrl]: convertUrl,
  [Commands.setApiKey]: setApiKey,
  [Commands.clearApiKey]: clearApiKey,
  [Commands.showJobs]: showJobs,
  [Commands.showLog]: showLog,
  [Commands.openPlayer]: openPlayer,
  [Commands.cancelJob]: cancelJob,
  [Commands.retryJob]: retryJob,
  [Commands.revealAudio]: revealAudio,
  [Commands.saveAudioAs]: saveAudioAs,
  [Commands.copyJobId]: copyJobId,
  [Commands.removeJob]: removeJob,
  [Commands.clearFinished]: clearFinished,
  [Commands.clearFailed]: clearFailed,
  [Commands.showJobError]: showJobError,
  [Commands.useLocalEngine]: useLocalEngine,
  [Commands.useRemoteService]: useRemoteService,
  [Commands.openSample]: openSample,
  [Commands.playNext]: playNext,
  [Commands.addToQueue]: addToQueue,
  [Commands.removeFromQueue]: removeFromQueue,
  [Commands.togglePlayback]: togglePlayback,
  [Commands.playFromHere]: playFromHere,
  [Commands.setVoiceKey]: setVoiceKey,
  [Commands.clearVoiceKey]: clearVoiceKey,
};

export function registerCommands(ctx: CommandContext): vscode.Disposable[] {
  return Object.entries(COMMANDS).map(([id, factory]) =>
    vscode.commands.registerCommand(id, factory(ctx) as (...args: unknown[]) => unknown),
  );
}
