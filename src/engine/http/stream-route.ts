// GET /v1/jobs/{id}/stream: the job's events as Server-Sent Events, from after Last-Event-ID: the stored history, then
// the live events of a running job (or 204 when a finished job has nothing after the client's last event).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JobHandle, JobServiceApi } from '../core/service-api';
import { headerValue } from './api-error';
import type { EventStreams } from './event-streams';

export async function streamJob(
  options: { service: JobServiceApi; streams: EventStreams },
  req: IncomingMessage,
  res: ServerResponse,
  owner: string,
  job: JobHandle,
  base: string,
): Promise<void> {
  const header = headerValue(req.headers['last-event-id']);
  // An id this engine never sent (garbage, or from another server) is ignored: the client gets the whole history.
  const afterId = header !== undefined && /^\d{1,15}$/.test(header.trim()) ? Number(header.trim()) : 0;
  let stopFollowing = () => {};
  const { service } = options;
  const stream = options.streams.create(res, owner, base, afterId, () => stopFollowing());
  const following = await service.follow(job, afterId, (events) => stream.send(events));
  if (following) {
    // The backlog may already have held the job's `end`, which ended the stream inside follow().
    if (stream.isEnded) {
      following.stop();
    } else {
      stopFollowing = () => following.stop();
      stream.start();
    }
    return;
  }
  // A finished job: its history is in the store and will not grow.
  const events = (await service.storedHistory(job)).filter((e) => e.id > afterId);
  if (events.length === 0) {
    // Nothing after the client's last event: 204 tells an EventSource to stop reconnecting.
    res.writeHead(204, { 'Cache-Control': 'no-store' }).end();
    stream.end();
    return;
  }
  stream.send(events);
  stream.end();
}
