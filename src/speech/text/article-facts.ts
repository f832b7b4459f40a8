// What the pipeline checks about an article before it speaks a word: its length as a job counts it, what is left to
// read once long runs without spaces are set aside, its words and its language. Each is a pass over the whole text
// (5-15 ms on 100,000 characters in a fresh process, the language detection up to 40 ms), so the parse worker that
// read the article works them out beside it (parse-worker.ts) and the engine's main thread only reads the result
// (issue 30: these passes, one after another, were the main thread's longest stall as a long job started).
import { countCharacters, readableLength } from '../../protocol/text';
import { type Article, articleText, countWords } from '../source/article';
import { detectLanguage, type LanguageVerdict } from './language';

export interface ArticleFacts {
  /** Characters as counted at submission (whitespace runs as one). */
  characters: number;
  /** Characters outside runs without spaces, and the longest such run (readableLength). */
  readable: number;
  longestRun: number;
  words: number;
  language: LanguageVerdict;
}

export function articleFacts(article: Article): ArticleFacts {
  const text = articleText(article);
  const { readable, longestRun } = readableLength(text);
  return {
    characters: countCharacters(text.replace(/\s+/g, ' ')),
    readable,
    longestRun,
    words: countWords(text),
    language: detectLanguage(article),
  };
}
