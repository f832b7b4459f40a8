// Open Player and Save Audio As (the job's MP3, with its transcript beside it, where the user chooses).
import { access } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as vscode from 'vscode';
import { Commands } from '../command-ids';
import { fileNameFor, transcriptPathFor } from '../webview/save-names';
import { type CommandContext, type JobTarget, resolveJob } from './context';

export const openPlayer =
  (ctx: CommandContext) =>
  async (target?: JobTarget): Promise<void> => {
    const job = await resolveJob(
      ctx,
      target,
      (j) => (j.status === 'succeeded' && j.files !== undefined) || (j.parts?.length ?? 0) > 0,
      'No finished job to play yet. Convert a selection, a document or a URL first.',
    );
    if (job) await ctx.player.open(job.id);
  };

/** Play / pause from anywhere (Ctrl+Alt+Space while the player is open); with no player, offers to open one. */
export const togglePlayback = (ctx: CommandContext) => (): void => {
  if (ctx.player.togglePlayback()) return;
  ctx.notifier.info('The player has no audio open.', [
    { title: 'Open Player', run: () => vscode.commands.executeCommand(Commands.openPlayer) },
  ]);
};

export const saveAudioAs =
  (ctx: CommandContext) =>
  async (which?: JobTarget): Promise<void> => {
    const job = await resolveJob(ctx, which, (j) => j.files !== undefined, 'No finished job has audio yet.');
    if (!job) return;
    if (!job.files) {
      ctx.notifier.warn(`"${job.title}" has no audio yet.`);
      return;
    }
    if (!(await exists(job.files.audio))) {
      ctx.notifier.warn(
        `The audio of "${job.title}" is no longer in Article Audio's storage, so there is nothing to save. Convert it again to get it back.`,
        [{ title: 'Convert Again', run: () => vscode.commands.executeCommand(Commands.retryJob, job.id) }],
      );
      return;
    }
    const target = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.joinPath(saveFolder(), `${fileNameFor(job.title)}.mp3`),
      filters: { 'MP3 audio': ['mp3'] },
      saveLabel: 'Save Audio',
      title: `Save "${job.title}" as MP3`,
    });
    if (!target) return;
    try {
      await vscode.workspace.fs.copy(vscode.Uri.file(job.files.audio), target, { overwrite: true });
      let transcriptNote = '';
      if (job.files.transcript && (await exists(job.files.transcript))) {
        const transcriptTarget = target.with({ path: transcriptPathFor(target.path) });
        await vscode.workspace.fs.copy(vscode.Uri.file(job.files.transcript), transcriptTarget, { overwrite: true });
        transcriptNote = `, with its transcript ${path.posix.basename(transcriptTarget.path)} beside it`;
      }
      ctx.log.info(`saved the audio of ${job.id} to ${target.toString(true)}`);
      ctx.notifier.info(
        `Saved "${job.title}" to ${target.scheme === 'file' ? target.fsPath : target.toString(true)}${transcriptNote}.`,
      );
    } catch (error) {
      ctx.notifier.error(`Could not save "${job.title}"`, error);
    }
  };

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** Where Save As opens: the setting, else the first workspace folder, else the home folder. */
function saveFolder(): vscode.Uri {
  const setting = vscode.workspace.getConfiguration('articleAudio').get<string>('saveDirectory')?.trim();
  const workspace = vscode.workspace.workspaceFolders?.[0]?.uri;
  if (setting) {
    const expanded = setting === '~' || setting.startsWith('~/') ? path.join(os.homedir(), setting.slice(1)) : setting;
    if (path.isAbsolute(expanded)) return vscode.Uri.file(expanded);
    if (workspace) return vscode.Uri.joinPath(workspace, expanded);
  }
  return workspace ?? vscode.Uri.file(os.homedir());
}
