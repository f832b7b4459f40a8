// Declarations for what the pipeline uses and no installed typing describes.

declare module '@echogarden/speex-resampler-wasm' {
  /** The Emscripten module factory of the Speex resampler; the module's shape is declared where it is used. */
  const factory: () => Promise<unknown>;
  export default factory;
}

/** The part of the WebAssembly JS API the synthesis worker uses (Node has it; the project loads no DOM typings). */
declare namespace WebAssembly {
  interface Module {
    readonly __brand?: 'WebAssembly.Module';
  }

  const Module: new (bytes: ArrayBufferView | ArrayBuffer) => Module;
  interface Instance {
    readonly exports: Record<string, unknown>;
  }
  type Imports = Record<string, Record<string, unknown>>;
  function compile(bytes: ArrayBufferView | ArrayBuffer): Promise<Module>;
  function instantiate(module: Module, imports?: Imports): Promise<Instance>;
}
