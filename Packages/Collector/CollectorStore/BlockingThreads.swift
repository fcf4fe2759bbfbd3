import Foundation

/// A fixed number of threads of their own for blocking or long work: database calls that block,
/// reports that compute for seconds.
///
/// Dispatch's global queues on Linux run at most one thread per core for such work, so work queued
/// there by reports can hold back a `/health` check or an ingest commit queued behind it; these
/// threads are the operating system's to schedule, beside everyone else's.
///
/// ```swift
/// let threads = BlockingThreads(name: "sqlite", count: 4)
/// let count = try await threads.run { try database.count() }
/// ```
public final class BlockingThreads: Sendable {
  private let queue: JobQueue

  /// Starts `count` threads (at least one) named `name`.
  public init(name: String, count: Int) {
    queue = JobQueue()
    for index in 0..<max(1, count) {
      let thread = Thread { [queue] in queue.work() }
      thread.name = "\(name)-\(index)"
      thread.start()
    }
  }

  deinit { queue.stop() }

  /// Runs `job` on one of the threads, in the order submitted.
  public func submit(_ job: @escaping @Sendable () -> Void) { queue.add(job) }

  /// Runs `work` on one of the threads and returns its result.
  public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      submit { continuation.resume(with: Result { try work() }) }
    }
  }

  /// The jobs waiting, shared by the threads.
  private final class JobQueue: @unchecked Sendable {
    // Safe: `jobs` and `stopped` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var next = 0
    private var stopped = false

    func add(_ job: @escaping @Sendable () -> Void) {
      condition.lock()
      jobs.append(job)
      condition.signal()
      condition.unlock()
    }

    func stop() {
      condition.lock()
      stopped = true
      condition.broadcast()
      condition.unlock()
    }

    /// A thread's loop: take the next job and run it, until stopped with nothing left.
    func work() {
      while true {
        condition.lock()
        while next == jobs.count && !stopped { condition.wait() }
        if next == jobs.count {
          condition.unlock()
          return
        }
        let job = jobs[next]
        next += 1
        if next == jobs.count {
          jobs.removeAll(keepingCapacity: true)
          next = 0
        }
        condition.unlock()
        job()
      }
    }
  }
}
