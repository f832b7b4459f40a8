// The three models of article-to-audio (spec 4.1): the one table every layer reads, from the engine's voices to the
// extension's quick pick and the command line's --model.

export const MODELS = [
  { id: 'article-audio-1-mini', label: 'Mini', styleId: 0, description: 'Narration in the fastest clear voice' },
  {
    id: 'article-audio-1-pro',
    label: 'Pro',
    styleId: 1,
    description: 'Narration in the most intelligible voice, with pauses at headings and chapter marks',
  },
  {
    id: 'article-podcast-1-pro',
    label: 'Podcast',
    styleId: 2,
    description: 'A two-host show: two voices share the article section by section',
  },
] as const;

export type ModelId = (typeof MODELS)[number]['id'];
export type Model = (typeof MODELS)[number];

export const MODEL_IDS = MODELS.map((model) => model.id) as [ModelId, ...ModelId[]];

export function isModelId(value: unknown): value is ModelId {
  return typeof value === 'string' && (MODEL_IDS as readonly string[]).includes(value);
}

/** The model's short name (Mini, Pro, Podcast), or the id itself for a model this version does not know. */
export function modelLabel(id: string): string {
  return MODELS.find((model) => model.id === id)?.label ?? id;
}

export function modelById(id: ModelId): Model {
  return MODELS.find((model) => model.id === id)!;
}
