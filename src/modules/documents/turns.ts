/**
 * Turns per key within this process: work for one key runs one at a time, in arrival order. A key with
 * nothing queued takes no memory.
 */
export class Turns {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    const tail = previous ? previous.then(() => mine) : mine;
    this.tails.set(key, tail);
    try {
      await previous;
      return await work();
    } finally {
      done();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
