// The player page's inbox on the extension side: messages wait until the page says it is ready.
import type * as vscode from 'vscode';
import type { HostMessage } from './protocol';

/** Holds messages for the page until it says it is ready (a page posted to before its script runs loses them). */
export class PagePort {
  private ready = false;
  private queue: HostMessage[] = [];

  constructor(private readonly webview: vscode.Webview) {}

  post(message: HostMessage): void {
    // A load shows a job, so it replaces whatever still waits; parts and the queue belong to the load before them.
    if (!this.ready && (message.type === 'load' || message.type === 'unavailable')) this.queue = [];
    if (this.ready) void this.webview.postMessage(message);
    else this.queue.push(message);
  }

  /** Returns whether the page had already been ready (then it was reloaded and needs its job again). */
  markReady(): boolean {
    const wasReady = this.ready;
    this.ready = true;
    for (const message of this.queue.splice(0)) void this.webview.postMessage(message);
    return wasReady;
  }
}
