// File names for Save As. No vscode import, so they are unit-tested in plain Node.

/** A job title as a file name that every OS accepts. */
export function fileNameFor(title: string): string {
  const cleaned = title
    // eslint-disable-next-line no-control-regex
    .replace(/[\\/:*?"<>|\u0000-\u001f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\.+/, '')
    .slice(0, 80)
    .trim();
  return cleaned || 'article-audio';
}

/** The transcript's path beside the saved MP3 (a URI path, always with forward slashes): `talk.mp3` -> `talk.vtt`. */
export function transcriptPathFor(audioPath: string): string {
  const slash = audioPath.lastIndexOf('/');
  const dir = audioPath.slice(0, slash + 1);
  const name = audioPath.slice(slash + 1);
  return `${dir}${name.replace(/\.mp3$/i, '')}.vtt`;
}
