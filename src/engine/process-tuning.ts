// How the engine process is started when memory matters (the extension's local engine; the memory benchmark runs it
// the same way). Measured on a long article with two synthesis workers (issue 6 notes): 334-352 MB peak as plain
// `node`, 303 MB with both settings below, no speed change seen. Neither can be set from inside a running process.

/** V8 flags: a 1 MB young generation frees the synthesizer's short-lived buffers at once instead of holding up to 16 MB. */
export const ENGINE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];

/**
 * Environment: two glibc malloc arenas instead of one per thread, which otherwise keep freed memory per worker.
 * MALLOC_MMAP_THRESHOLD_=65536 as well was measured and left out (issue 14, 99k podcast, load 20, both runs side by
 * side): 216 MB peak against 219 MB without it, once the workers' garbage was bounded (audio-worker.ts).
 */
export const ENGINE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
