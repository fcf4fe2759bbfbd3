import CollectorStore
import Foundation

/// Runs reports with bounded concurrency and a time budget, on threads of their own.
///
/// At most `concurrency` reports run at once and at most `queue` wait for a turn; a report that
/// cannot start, or has not finished, within `budget` (waiting included) is refused with
/// ``Refused`` (the server answers 503 with `Retry-After`) and cancelled. Its turn is given back only
/// when its work has really stopped, so the bound holds even for work that ignores cancellation.
/// The work runs on the report threads (``ReportExecutor``), never on the threads that serve
/// ingestion and `/health`.
///
/// ```swift
/// let gate = ReportGate(concurrency: 2, queue: 32, budget: .seconds(30))
/// let funnel = try await gate.run { try await reports.funnel(filter, steps: steps, window: window) }
/// ```
public final class ReportGate: Sendable {
  /// A report that could not start or finish within the budget.
  public struct Refused: Error, Sendable, Hashable, CustomStringConvertible {
    /// Seconds after which a retry may succeed.
    public var retryAfter: Int
    /// Why: too many reports waiting, or the budget spent.
    public var reason: String

    public var description: String { reason }
  }

  /// Reports computed at once.
  public let concurrency: Int
  /// Reports waiting at most.
  public let queue: Int
  /// The longest a report may take, waiting included.
  public let budget: Duration
  private let executor = ReportExecutor.shared
  private let state = Locked(State())

  /// A gate.
  public init(concurrency: Int, queue: Int, budget: Duration) {
    self.concurrency = max(1, concurrency)
    self.queue = max(0, queue)
    self.budget = budget
  }

  /// Runs `work` within the bounds, or throws ``Refused``.
  public func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
    let deadline = ContinuousClock.now + budget
    guard await acquire(until: deadline) else {
      throw Refused(retryAfter: retryAfter, reason: "too many reports are running; retry")
    }
    let race = Race<T>()
    return try await withCheckedThrowingContinuation { continuation in
      race.begin(continuation)
      let timer = Task {
        try? await Task.sleep(until: deadline, clock: .continuous)
        guard !Task.isCancelled else { return }
        race.finish(.failure(Refused(retryAfter: self.retryAfter, reason: "the report took too long; retry")))
      }
      let job = Task(executorPreference: executor) {
        let result: Result<T, any Error>
        do { result = .success(try await work()) } catch { result = .failure(error) }
        timer.cancel()
        self.release()
        race.finish(result)
      }
      race.onLoss { job.cancel() }
    }
  }

  private var retryAfter: Int { max(1, Int(budget.components.seconds / 2)) }

  /// Waits for a turn until `deadline`; false when the line is full or the deadline passed.
  private func acquire(until deadline: ContinuousClock.Instant) async -> Bool {
    let id = UUID()
    return await withCheckedContinuation { continuation in
      let waiting: Bool = state.with { state in
        if state.running < concurrency {
          state.running += 1
          continuation.resume(returning: true)
          return false
        }
        guard state.waiters.count < queue else {
          continuation.resume(returning: false)
          return false
        }
        state.waiters.append((id, continuation))
        return true
      }
      guard waiting else { return }
      Task {
        try? await Task.sleep(until: deadline, clock: .continuous)
        let expired = state.with { state in
          state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0).continuation }
        }
        expired?.resume(returning: false)
      }
    }
  }

  /// Hands the turn to the first waiter, or frees it.
  private func release() {
    let next = state.with { state -> CheckedContinuation<Bool, Never>? in
      if state.waiters.isEmpty {
        state.running -= 1
        return nil
      }
      return state.waiters.removeFirst().continuation
    }
    next?.resume(returning: true)
  }

  private struct State {
    var running = 0
    var waiters: [(id: UUID, continuation: CheckedContinuation<Bool, Never>)] = []
  }
}

/// The first of two outcomes wins: the work's result or the budget's end.
private final class Race<T: Sendable>: @unchecked Sendable {
  // Safe: every field is read and written under `lock`.
  private let lock = NSLock()
  private var continuation: CheckedContinuation<T, any Error>?
  private var lost: (@Sendable () -> Void)?
  private var finished = false

  func begin(_ continuation: CheckedContinuation<T, any Error>) {
    lock.withLock { self.continuation = continuation }
  }

  /// Resumes with `result` when nothing did yet; the budget's win then cancels the work.
  func finish(_ result: Result<T, any Error>) {
    let (winner, cancel) = lock.withLock { () -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
      guard !finished else { return (nil, nil) }
      finished = true
      defer { continuation = nil }
      return (continuation, lost)
    }
    winner?.resume(with: result)
    if winner != nil, case .failure(let error) = result, error is ReportGate.Refused { cancel?() }
  }

  /// What to do when the budget wins (cancel the work); at once when it already has.
  func onLoss(_ action: @escaping @Sendable () -> Void) {
    let already = lock.withLock { () -> Bool in
      lost = action
      return finished
    }
    if already { action() }
  }
}

/// The threads reports run on: threads of their own (``BlockingThreads``), apart from Swift
/// concurrency's pool that serves requests and from Dispatch's.
///
/// One set per process (``shared``), whatever the number of collectors in it (tests make hundreds):
/// each gate bounds how many of its reports run, and the threads are not made and ended with every
/// collector.
final class ReportExecutor: TaskExecutor, Sendable {
  /// The process's report threads: at least 2, one per core beyond that.
  static let shared = ReportExecutor(threads: max(2, ProcessInfo.processInfo.activeProcessorCount))

  private let threads: BlockingThreads

  private init(threads: Int) { self.threads = BlockingThreads(name: "collector-reports", count: threads) }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedTaskExecutor()
    threads.submit { job.runSynchronously(on: executor) }
  }
}

/// A value behind a lock.
final class Locked<Value>: @unchecked Sendable {
  // Safe: `value` is only reached through `with`, under `lock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func with<R>(_ body: (inout Value) -> R) -> R {
    lock.lock()
    defer { lock.unlock() }
    return body(&value)
  }
}
