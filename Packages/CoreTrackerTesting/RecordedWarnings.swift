import CoreTracker

/// Keeps the lines a tracker says through its ``TrackerConfiguration/warning`` (a refused key, an
/// event that breaks the tracking plan in a development build), for a test to read.
///
/// ```swift
/// let warnings = RecordedWarnings()
/// let tracker = Tracker(services: [...], configuration: TrackerConfiguration(warning: warnings.record))
/// #expect(warnings.lines.isEmpty)
/// ```
public final class RecordedWarnings: Sendable {
  private let storage = Locked<[String]>([])

  /// An empty record.
  public init() {}

  /// Every line said so far, in order.
  public var lines: [String] { storage.snapshot }

  /// Keeps `line`: pass it as the configuration's `warning`.
  @Sendable public func record(_ line: String) { storage.withLock { $0.append(line) } }
}
