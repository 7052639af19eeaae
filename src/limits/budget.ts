// A budget of bytes held in memory at once, shared by the work that holds them: delivery attempts
// take their message's size before reading it and give it back when done, so however many large
// emails wait in the queue, only so many megabytes of them are in memory (docs/mail.md §3). First
// come, first served; a piece larger than the whole budget runs alone.

export class ByteBudget {
  private used = 0;
  private readonly waiters: { n: number; grant: () => void }[] = [];

  constructor(readonly capacity: number) {}

  /** Wait until `n` bytes are free and take them; resolves to the function that gives them back. */
  async take(n: number): Promise<() => void> {
    const want = Math.max(0, Math.min(n, this.capacity));
    if (this.waiters.length === 0 && this.used + want <= this.capacity) this.used += want;
    else await new Promise<void>((grant) => this.waiters.push({ n: want, grant }));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.used -= want;
      this.wake();
    };
  }

  /** Bytes taken now. */
  get inUse(): number {
    return this.used;
  }

  private wake(): void {
    while (this.waiters.length && this.used + this.waiters[0]!.n <= this.capacity) {
      const w = this.waiters.shift()!;
      this.used += w.n;
      w.grant();
    }
  }
}
