/// What is wrong with a request, and where: the one field-and-reason error of the collector's
/// boundaries.
///
/// The batch and SimpleAnalytics decoders, the ingest rules and the report parameters all throw it;
/// the collector's HTTP layer answers it as a 400 naming the field
/// (`{"error":{"field":"events[3].name","reason":"is empty"}}`), and trackerctl prints it.
public struct FieldError: Error, Codable, Sendable, Hashable, CustomStringConvertible {
  /// The field path (`context.appName`, `events[3].timestamp`, a report's query parameter), empty
  /// for the request as a whole.
  public var field: String
  /// What is wrong, in words.
  public var reason: String

  /// An error at `field`.
  public init(field: String, reason: String) {
    self.field = field
    self.reason = reason
  }

  public var description: String { field.isEmpty ? reason : "\(field): \(reason)" }
}
