// Every command the extension contributes, in one table used by code and checked against package.json
// (scripts/check-commands.mjs and the first integration test).
export const Commands = {
  convertSelection: 'articleAudio.convertSelection',
  convertDocument: 'articleAudio.convertDocument',
  convertUrl: 'articleAudio.convertUrl',
  setApiKey: 'articleAudio.setApiKey',
  clearApiKey: 'articleAudio.clearApiKey',
  showJobs: 'articleAudio.showJobs',
  showLog: 'articleAudio.showLog',
  openPlayer: 'articleAudio.openPlayer',
  cancelJob: 'articleAudio.cancelJob',
  retryJob: 'articleAudio.retryJob',
  revealAudio: 'articleAudio.revealAudio',
  saveAudioAs: 'articleAudio.saveAudioAs',
  copyJobId: 'articleAudio.copyJobId',
  removeJob: 'articleAudio.removeJob',
  clearFinished: 'articleAudio.clearFinished',
  clearFailed: 'articleAudio.clearFailed',
  showJobError: 'articleAudio.showJobError',
  useLocalEngine: 'articleAudio.useLocalEngine',
  useRemoteService: 'articleAudio.useRemoteService',
  openSample: 'articleAudio.openSample',
  playNext: 'articleAudio.playNext',
  addToQueue: 'articleAudio.addToQueue',
  removeFromQueue: 'articleAudio.removeFromQueue',
  togglePlayback: 'articleAudio.togglePlayback',
  playFromHere: 'articleAudio.playFromHere',
  setVoiceKey: 'articleAudio.setVoiceKey',
  clearVoiceKey: 'articleAudio.clearVoiceKey',
} as const;

export type CommandId = (typeof Commands)[keyof typeof Commands];

/** Ids used in package.json `contributes` besides commands. */
export const Views = {
  container: 'articleAudio',
  jobs: 'articleAudio.jobs',
  player: 'articleAudio.player',
} as const;

/** Context keys set with `setContext`, used in `when` clauses of package.json. */
export const ContextKeys = {
  hasApiKey: 'articleAudio.hasApiKey',
  serviceMode: 'articleAudio.serviceMode',
  hasJobs: 'articleAudio.hasJobs',
  hasRunningJobs: 'articleAudio.hasRunningJobs',
  hasFinishedJobs: 'articleAudio.hasFinishedJobs',
  hasPlayableJobs: 'articleAudio.hasPlayableJobs',
  hasQueue: 'articleAudio.hasQueue',
  playerOpen: 'articleAudio.playerOpen',
} as const;
