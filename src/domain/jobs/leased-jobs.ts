/**
 * What a lease holder learns when it renews a running job's lease: the job is still its own, it
 * was taken by another process after the lease lapsed (this one stalled), or it was cancelled
 * by hand (`drm jobs cancel`).
 */
export type Renewal = 'held' | 'lost' | 'cancelled';

/** Why a running job's work was told to stop before it ended. */
export type StopReason = Exclude<Renewal, 'held'> | 'given-back' | 'caller';

/**
 * One table of leased jobs as the runner drives it (ingest jobs, forensic cases). Every write
 * names the holder, and a write by a holder that no longer holds the job changes nothing and
 * answers false: that is how a stalled process learns that another one took its job.
 */
export interface LeasedJobs<Job, Result> {
  /** how logs name one job: "ingest job", "forensic case" */
  noun: string;
  /** how a failure reason names the work: "ingest" gives "ingest failed: …", "ingest cancelled" */
  label: string;
  /** the log field that carries a job's id (jobId, caseId) */
  idField: string;
  id(job: Job): string;
  /** takes so far, this one included */
  attempts(job: Job): number;
  /** Leases the oldest takeable job (queued, or its holder's lease lapsed), counting the take. */
  claimNext(holder: string, now: number, leaseUntil: number): Promise<Job | undefined>;
  renew(job: Job, holder: string, leaseUntil: number): Promise<Renewal>;
  /** Gives a job back to the queue as if it had never been taken (its attempt cleaned up by its own work). */
  release(job: Job, holder: string): Promise<void>;
  /** The work itself; `signal` says stop (lease lost, cancelled, given back, or the caller's own signal). */
  run(job: Job, signal: AbortSignal): Promise<Result>;
  /** Stores the job's result; false when the job is no longer this holder's. */
  succeed(job: Job, holder: string, result: Result): Promise<boolean>;
  /** Stores the job as failed with `reason`; false when the job is no longer this holder's. */
  fail(job: Job, holder: string, reason: string): Promise<boolean>;
  /** After this holder stored the job's end: what the end lets go (a source, a kept leak). */
  ended?(job: Job, how: 'succeeded' | 'failed'): Promise<void>;
}

export interface LeasedJobRunnerOptions {
  /** who this process is in the leases it takes; only it may renew or end those jobs */
  holder: string;
  /** how long a taken job stays taken without news from its holder (renewed every third of it) */
  leaseMs: number;
  /** how often the loop looks for jobs when it found none (default 2 s) */
  pollMs?: number;
  /** jobs run at once in this process (default 1) */
  concurrency?: number;
  /** a job taken more often than this (each take a holder that died on it) is failed, not run again (default 3) */
  maxAttempts?: number;
  /**
   * What `stop` does to running jobs: `give-back` stops their work and queues them again at
   * once for another process (an ingest: restarting it costs only time); `finish` lets them end
   * first (an analysis: a restart would redo minutes of decoding for nothing).
   */
  onStop: 'give-back' | 'finish';
}

export interface TakeOptions<Job, Result> {
  /** the caller's own signal: its abort ends the job as failed, "<label> cancelled" */
  signal?: AbortSignal;
  /** this run's work instead of the table's `run` (a caller that hears the progress itself) */
  run?: (job: Job, signal: AbortSignal) => Promise<Result>;
}
