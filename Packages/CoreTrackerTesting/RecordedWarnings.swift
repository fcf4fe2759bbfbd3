public import CoreTracker

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

extension RecordedWarnings {
  /// A development build's configuration whose warnings are kept here: a product tracker made with
  /// it checks every event against its plan (``TrackerConfiguration/environment``), and says each
  /// violation into ``lines``. No session events, so the events seen are the test's own.
  public var developmentConfiguration: TrackerConfiguration {
    TrackerConfiguration(environment: .development, emitsSessionEvents: false, warning: record)
  }
}
