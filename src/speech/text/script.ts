// The script of a job: what each model says, in which voice, with which pauses. Article sentences keep their
// written form for the transcript and get a spoken form for the synthesizer; lines the show adds (greetings,
// hand-overs, summaries of code) are both written and spoken as they are. The models' voices and pauses are in
// profiles.ts, the podcast's conversation in podcast.ts, the words said around the article in wording.ts.
import type { Article, Block } from '../source/article';
import type { EngineModelId } from '../types';
import { listParts, podcastScript, tableParts } from './podcast';
import { MODEL_PROFILES, type ModelProfile, type ScriptLine } from './profiles';
import { splitSentences } from './sentences';
import { toSpoken } from './spoken';
import {
  FOOTNOTE,
  ORDINALS,
  headingSpoken,
  joinWords,
  languageName,
  plural,
  sectionsOf,
  tableRows,
  titleOf,
} from './wording';

/** Builds the whole script of a job. Cheap: text only; the audio is made line by line later. */
export function buildScript(
  article: Article,
  modelId: EngineModelId,
): { profile: ModelProfile; lines: ScriptLine[]; sections: number } {
  const profile = MODEL_PROFILES[modelId];
  const lines: ScriptLine[] = [];
  // Set by a block reader so that the block's first line starts a paragraph in the transcript.
  let paragraphNext = false;
  const say = (
    written: string,
    voice: number,
    pauseAfter: number,
    extra: Partial<ScriptLine> = {},
    spoken = toSpoken(written),
  ) => {
    if (!spoken.replace(/[^\p{L}\p{N}]/gu, '')) return;
    lines.push({
      written,
      spoken,
      voice,
      pauseBefore: 0,
      pauseAfter,
      ...extra,
      ...(paragraphNext ? { paragraph: true } : {}),
    });
    paragraphNext = false;
  };
  const sentences = (text: string, voice: number, lastPause: number, first: Partial<ScriptLine> = {}) => {
    const parts = splitSentences(text);
    parts.forEach((sentence, i) =>
      say(sentence, voice, i === parts.length - 1 ? lastPause : profile.sentencePause, i === 0 ? first : {}),
    );
  };
  const generated = (text: string, voice: number, pauseAfter: number, extra: Partial<ScriptLine> = {}) => {
    paragraphNext = true;
    say(text, voice, pauseAfter, extra);
  };

  const readBlock = (block: Block, voice: number) => {
    paragraphNext = true;
    switch (block.kind) {
      case 'heading':
        say(
          block.text,
          voice,
          profile.headingPauseAfter,
          {
            pauseBefore: profile.headingPauseBefore,
            chapter: { title: block.text, level: block.level },
            heading: true,
          },
          headingSpoken(block.text),
        );
        break;
      case 'paragraph':
        sentences(block.text, voice, profile.paragraphPause);
        break;
      case 'quote':
        say('Quote:', voice, 0.2);
        sentences(block.text, voice, 0.3);
        say('End of quote.', voice, profile.paragraphPause);
        break;
      case 'list': {
        const part = listParts.get(block) ?? { first: 0, total: block.items.length };
        if (part.first === 0 && part.total >= 3) say(`A list of ${part.total} items.`, voice, 0.3);
        block.items.forEach((item, k) => {
          const i = part.first + k;
          paragraphNext = true;
          const last = k === block.items.length - 1;
          const pause = last ? profile.paragraphPause : profile.listItemPause;
          const end: Partial<ScriptLine> =
            part.total >= 2 ? { listItem: i === part.total - 1 ? 'last' : 'middle' } : {};
          const parts = splitSentences(item);
          const lead = !block.ordered ? '' : i < ORDINALS.length ? `${ORDINALS[i]}, ` : `Number ${i + 1}, `;
          parts.forEach((sentence, j) =>
            say(
              sentence,
              voice,
              j === parts.length - 1 ? pause : profile.sentencePause,
              j === parts.length - 1 ? end : {},
              j === 0 ? `${lead}${toSpoken(sentence)}` : toSpoken(sentence),
            ),
          );
        });
        break;
      }
      case 'code': {
        const language = languageName(block.language);
        say(
          `Here the article shows a code example${language ? ` in ${language}` : ''}, ${plural(block.lineCount, 'line')} long, which is not read aloud.`,
          voice,
          profile.paragraphPause,
        );
        break;
      }
      case 'table': {
        const all = tableRows(block);
        const part = tableParts.get(block);
        const rows = all && part ? all.slice(part.first, part.end) : all;
        if (!rows) {
          say(
            `Here the article has a table of ${plural(block.rows, 'row')} and ${plural(block.columns, 'column')}; see the text for its details.`,
            voice,
            profile.paragraphPause,
          );
          break;
        }
        if (!part || part.first === 0)
          say(
            `A table of ${plural(all!.length, 'row')}${block.cells?.[0] ? `: ${joinWords(block.cells[0].filter(Boolean))}` : ''}.`,
            voice,
            0.3,
          );
        rows.forEach((row, i) => {
          paragraphNext = true;
          say(row, voice, i === rows.length - 1 ? profile.paragraphPause : profile.listItemPause);
        });
        break;
      }
    }
  };

  // Footnotes are read after the article, not where their definitions happen to stand in the text.
  const footnotes: string[] = [];
  const body: Article = {
    ...article,
    blocks: article.blocks.filter((block) => {
      const note = block.kind === 'paragraph' ? FOOTNOTE.exec(block.text) : null;
      if (note) footnotes.push(note[2]!);
      return !note;
    }),
  };
  const title = titleOf(article);
  const sections = sectionsOf(body);

  if (profile.podcast) {
    podcastScript(body, title, sections, profile, generated, readBlock, lines);
  } else {
    if (article.title)
      say(
        article.title,
        0,
        profile.headingPauseAfter + 0.2,
        { chapter: { title: article.title, level: 1 }, paragraph: true, heading: true },
        `${toSpoken(article.title)}.`,
      );
    if (article.byline) generated(`By ${article.byline}.`, 0, profile.paragraphPause);
    let sectionNumber = 0;
    sections.forEach((section, index) => {
      const start = lines.length;
      if (section.heading) {
        sectionNumber++;
        paragraphNext = true;
        const spoken = headingSpoken(section.heading.text, profile.numberSections ? sectionNumber : undefined);
        say(
          section.heading.text,
          0,
          profile.headingPauseAfter,
          {
            pauseBefore: profile.headingPauseBefore,
            chapter: { title: section.heading.text, level: section.heading.level },
            heading: true,
          },
          spoken,
        );
      }
      for (const block of section.blocks) readBlock(block, 0);
      if (lines.length > start) lines[start]!.section = index + 1;
    });
    if (footnotes.length > 0) {
      paragraphNext = true;
      say(
        'Notes',
        0,
        profile.headingPauseAfter,
        { pauseBefore: profile.headingPauseBefore, chapter: { title: 'Notes', level: 2 }, heading: true },
        'Notes.',
      );
      footnotes.forEach((note) => readBlock({ kind: 'paragraph', text: note }, 0));
    }
  }
  const first = lines[0];
  if (first && !lines.some((l) => l.chapter)) first.chapter = { title, level: 1 };
  return { profile, lines, sections: sections.length };
}
