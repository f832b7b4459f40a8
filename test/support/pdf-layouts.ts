// PDFs of the layouts people listen to, laid out here with text written for the tests (pdf-file.ts): a two-column
// paper with running heads, page numbers, a hyphenated word, a figure caption and references; a slide deck with a
// footer on every slide; a "scan" (pages with no text). Each knows the sentences a listener must hear, in order.
import { type PdfPage, type PdfText, pdfOf, wrap } from './pdf-file';

export interface LaidOut {
  pdf: Buffer;
  /** Sentences that must be read, in this order. */
  inOrder: string[];
  /** Text that must not be read (running heads, footers, page numbers, references, captions). */
  absent: string[];
}

const TOPICS = [
  'lighthouse',
  'orchard',
  'glacier',
  'harbour',
  'meadow',
  'workshop',
  'library',
  'observatory',
  'vineyard',
  'bakery',
  'railway',
  'garden',
];

/** A paragraph of prose about a topic, with a sentence that names where it stands. */
function paragraph(topic: string, index: number): string {
  return (
    `Paragraph ${index} begins beside the ${topic}. ` +
    `The quiet machine measured the ${topic} for many evenings and wrote down what it heard in a small notebook. ` +
    `Nobody asked it to do so, yet the notes grew longer with every season that passed over the ${topic}. ` +
    `Paragraph ${index} ends with the ${topic} asleep.`
  );
}

/** Two columns on US Letter pages, 10 pt body, running head and page number on every page. */
export function twoColumnPaper(): LaidOut {
  const pages: PdfPage[] = [];
  const columns = [72, 318];
  const top = 700;
  const bottom = 80;
  const lineHeight = 12;
  let page: PdfPage | undefined;
  let column = 0;
  let y = 0;
  const newPage = () => {
    page = {
      width: 612,
      height: 792,
      texts: [
        { x: 72, y: 760, size: 9, text: 'Proceedings of the Workshop on Quiet Machines, Volume 3' },
        { x: 300, y: 40, size: 9, text: String(pages.length + 1) },
      ],
    };
    pages.push(page);
    column = 0;
    y = pages.length === 1 ? 600 : top;
  };
  const place = (text: PdfText) => {
    if (!page) newPage();
    if (y < bottom) {
      if (column === 0) {
        column = 1;
        y = pages.length === 1 ? 600 : top;
      } else newPage();
    }
    (page as PdfPage).texts.push({ ...text, x: columns[column] as number, y });
    y -= text.size >= 12 ? 18 : lineHeight;
  };
  newPage();
  const first = pages[0] as PdfPage;
  first.texts.push(
    { x: 72, y: 690, size: 18, text: 'Listening to Quiet Machines in Two Columns' },
    { x: 72, y: 664, size: 11, text: 'A. Writer and B. Reader, Institute of Test Layouts' },
  );
  const inOrder: string[] = [];
  const blocks: { heading?: string; text?: string; caption?: boolean }[] = [
    { heading: '1 Introduction' },
    ...TOPICS.slice(0, 4).map((t, i) => ({ text: paragraph(t, i + 1) })),
    {
      text: 'This paragraph holds an impor-|tant word split at the end of its first line, which a listener must hear whole.',
    },
    { text: 'Figure 1: A quiet machine at rest beside the harbour wall.', caption: true },
    { heading: '2 Method' },
    ...TOPICS.slice(4, 9).map((t, i) => ({ text: paragraph(t, i + 5) })),
    { heading: '3 Results' },
    ...TOPICS.slice(9).map((t, i) => ({ text: paragraph(t, i + 10) })),
    { heading: 'References' },
    { text: '[1] C. Author. A study of machines that listen. Journal of Silence, 12(3):45-67, 2001.' },
    { text: '[2] D. Author. Reading columns aloud. Proceedings of Layouts, 2004.' },
  ];
  for (const block of blocks) {
    if (block.heading) {
      y -= 6;
      place({ x: 0, y: 0, size: 12, text: block.heading });
      continue;
    }
    const size = block.caption ? 9 : 10;
    for (const line of wrap(block.text ?? '', 40)) place({ x: 0, y: 0, size, text: line });
    y -= 8;
    if (block.text?.startsWith('Paragraph')) {
      const [opening] = block.text.split('. ');
      inOrder.push(`${opening}.`);
      inOrder.push(/Paragraph \d+ ends with the \w+ asleep\./.exec(block.text)?.[0] ?? '');
    }
  }
  inOrder.splice(8, 0, 'an important word split');
  return {
    pdf: pdfOf(pages),
    inOrder,
    absent: ['Proceedings of the Workshop', 'impor-', 'Figure 1', 'Journal of Silence', 'Reading columns aloud'],
  };
}

/** Four 16:9 slides: a title, bullets, a footer and a slide number on every slide; bookmarks name the slides. */
export function slideDeck(): LaidOut {
  const slides = [
    { title: 'Quiet Machines', bullets: ['A talk about machines that listen to the world around them.'] },
    {
      title: 'Why listen',
      bullets: ['Listening machines notice slow changes.', 'They keep notes that people can read later.'],
    },
    {
      title: 'How they work',
      bullets: ['A microphone hears the room every evening.', 'A small notebook keeps what was heard.'],
    },
    { title: 'What comes next', bullets: ['More machines will listen in more places.', 'Thank you for listening.'] },
  ];
  const pages: PdfPage[] = slides.map((slide, i) => ({
    width: 720,
    height: 405,
    texts: [
      { x: 60, y: 330, size: 28, text: slide.title },
      ...slide.bullets.map((bullet, b) => ({ x: 60, y: 260 - b * 40, size: 18, text: bullet })),
      { x: 60, y: 20, size: 16, text: 'Quiet Machines Conference, Lisbon' },
      { x: 680, y: 20, size: 16, text: String(i + 1) },
    ],
  }));
  return {
    pdf: pdfOf(
      pages,
      slides.map((s, i) => ({ title: s.title, page: i + 1 })),
    ),
    inOrder: slides.flatMap((s) => s.bullets),
    absent: ['Lisbon'],
  };
}

/** Pages that are pictures only: what a scan without text recognition is to a reader of text. */
export function scannedPdf(): Buffer {
  return pdfOf([
    { width: 612, height: 792, texts: [], boxes: [[72, 72, 468, 648]] },
    { width: 612, height: 792, texts: [], boxes: [[72, 72, 468, 648]] },
  ]);
}
