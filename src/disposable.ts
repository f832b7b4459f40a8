// The base class of every owner of subscriptions (vscode-pull-request-github's `Disposable` with `_register`): what
// an owner registers is disposed with it, in reverse order, once. Plain TypeScript (no vscode import), so any layer
// of the extension can extend it.

export interface DisposableLike {
  dispose(): unknown;
}

export abstract class Disposable implements DisposableLike {
  private readonly owned: DisposableLike[] = [];
  private disposed = false;

  /** Takes ownership of `value`: it is disposed with this object (at once, if this one is disposed already). */
  protected register<T extends DisposableLike>(value: T): T {
    if (this.disposed) void value.dispose();
    else this.owned.push(value);
    return value;
  }

  protected get isDisposed(): boolean {
    return this.disposed;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const value of this.owned.splice(0).reverse()) void value.dispose();
  }
}
