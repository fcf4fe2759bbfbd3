/// Debug mode: one switch (``TrackerConfiguration/debug``) that says, line by line, what the tracker
/// does with each event — the place to look when "nothing arrives".
///
/// ```
/// [CoreTracker] tracked signed_up (event) {"plan":"pro"}
/// [CoreTracker]   → collector: signed_up {"plan":"pro"}
/// [CoreTracker] dropped scroll: sampled_out
/// [CoreTracker] collector: delivered 1
/// [CoreTracker] collector: refused 1, HTTP 401 (wrong or revoked write key): key: is not a valid key
/// ```
///
/// Every event after the pipeline (its name, kind and parameters, personal data already scrubbed),
/// what each service was handed (the event in that service's shape), every event a stage or consent
/// dropped and why, and every delivery outcome with the server's reasons (``DeliveryReport``).
/// Lines are written from the tracker's worker and the services' delivery threads, never from the
/// caller's thread; leave it off in production (`nil`, the default).
public struct DebugLog: Sendable {
  /// Where the lines go.
  public let write: @Sendable (String) -> Void

  /// A debug log writing to `write`; standard error by default.
  public init(_ write: @escaping @Sendable (String) -> Void = TrackerConfiguration.standardError) {
    self.write = write
  }

  /// Lines on standard error.
  public static let standardError = DebugLog()

  func tracked(_ event: TrackedEvent) {
    write("[CoreTracker] tracked \(event.name) (\(event.kind.rawValue)) \(Self.json(event.parameters))")
  }

  func handed(_ event: TrackedEvent, to service: ServiceID) {
    write("[CoreTracker]   → \(service.rawValue): \(event.name) \(Self.json(event.parameters))")
  }

  func dropped(_ name: String, _ reason: DropReason) {
    write("[CoreTracker] dropped \(name): \(reason.rawValue)")
  }

  func delivery(_ report: DeliveryReport) {
    write("[CoreTracker] \(report)")
  }

  private static func json(_ parameters: EventParameters) -> String { ParameterValue.object(parameters).text }
}
