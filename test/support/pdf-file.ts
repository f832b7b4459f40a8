// A small PDF writer for tests: pages of text set in Helvetica (a standard font every PDF reader has) at given
// positions, an optional outline (bookmarks), and pages with no text at all (what a scan is to a text reader). Laid
// out by hand, so a test knows exactly where each line, header and footer sits.

export interface PdfText {
  x: number;
  y: number;
  size: number;
  text: string;
}

export interface PdfPage {
  width: number;
  height: number;
  texts: PdfText[];
  /** A filled grey rectangle (a "picture"): [x, y, width, height]. */
  boxes?: [number, number, number, number][];
}

function escape(text: string): string {
  // Helvetica in WinAnsiEncoding: Latin-1 covers the tests' text.
  return text.replace(/[\\()]/g, '\\$&');
}

/** The bytes of a PDF with these pages (and bookmarks to some of them). */
export function pdfOf(pages: PdfPage[], outline: { title: string; page: number }[] = []): Buffer {
  const objects: string[] = [];
  const add = (body: string) => objects.push(body) - 1 + 1;
  const catalog = add('');
  const pagesId = add('');
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const pageIds: number[] = [];
  for (const page of pages) {
    const ops = [
      ...(page.boxes ?? []).map(([x, y, w, h]) => `0.6 g ${x} ${y} ${w} ${h} re f 0 g`),
      ...page.texts.map((t) => `BT /F1 ${t.size} Tf ${t.x} ${t.y} Td (${escape(t.text)}) Tj ET`),
    ].join('\n');
    const content = add(`<< /Length ${Buffer.byteLength(ops, 'latin1')} >>\nstream\n${ops}\nendstream`);
    pageIds.push(
      add(
        `<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 ${page.width} ${page.height}] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`,
      ),
    );
  }
  objects[pagesId - 1] =
    `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  let outlinesRef = '';
  if (outline.length) {
    const root = add('');
    const itemIds = outline.map(() => add(''));
    outline.forEach((item, i) => {
      const links = [
        i > 0 ? `/Prev ${itemIds[i - 1]} 0 R` : '',
        i < outline.length - 1 ? `/Next ${itemIds[i + 1]} 0 R` : '',
      ].join(' ');
      objects[(itemIds[i] as number) - 1] =
        `<< /Title (${escape(item.title)}) /Parent ${root} 0 R ${links} /Dest [${pageIds[item.page - 1]} 0 R /XYZ 0 792 0] >>`;
    });
    objects[root - 1] =
      `<< /Type /Outlines /First ${itemIds[0]} 0 R /Last ${itemIds.at(-1)} 0 R /Count ${outline.length} >>`;
    outlinesRef = ` /Outlines ${root} 0 R`;
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pagesId} 0 R${outlinesRef} >>`;
  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** Words wrapped into lines of at most `chars` characters; "|" in the text forces a line break there. */
export function wrap(text: string, chars: number): string[] {
  const lines: string[] = [];
  for (const part of text.split('|')) {
    let line = '';
    for (const word of part.trim().split(/\s+/)) {
      if (line && line.length + 1 + word.length > chars) {
        lines.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    if (line) lines.push(line);
  }
  return lines;
}
