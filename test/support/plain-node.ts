// Plain Node stand-ins for what VS Code hands the extension's modules: an event emitter with vscode.EventEmitter's
// shape and a Memento-shaped key-value store. Real implementations, not mocks: they keep and deliver what is given.
export class PlainEmitter<T> {
  private listeners: ((value: T) => unknown)[] = [];
  readonly event = (listener: (value: T) => unknown) => {
    this.listeners.push(listener);
    return { dispose: () => void (this.listeners = this.listeners.filter((l) => l !== listener)) };
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) listener(value);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class MemoryStore {
  readonly values = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    // A copy, as a Memento hands back what was stored as JSON.
    const value = this.values.get(key);
    return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as T);
  }
  update(key: string, value: unknown): Promise<void> {
    this.values.set(key, JSON.parse(JSON.stringify(value)));
    return Promise.resolve();
  }
}

/** Resolves with the first value `event` delivers that `accept` takes. */
export function nextEvent<T>(
  event: (listener: (value: T) => unknown) => { dispose(): unknown },
  accept: (value: T) => boolean = () => true,
): Promise<T> {
  return new Promise((resolve) => {
    const subscription = event((value) => {
      if (!accept(value)) return;
      subscription.dispose();
      resolve(value);
    });
  });
}
