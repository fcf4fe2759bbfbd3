/// The three kinds of event a feature tracks (the Moments design's screen view, action and generic event).
///
/// Services may treat kinds differently: a Firebase service turns a ``screenView`` into GA4's
/// `screen_view`, a log service prints the kind beside the name.
public enum EventKind: String, Sendable, Hashable, Codable, CaseIterable {
  /// A screen (or page) became visible.
  case screenView = "screen_view"
  /// The user did something: tapped, liked, bought.
  case action
  /// Anything else: a state change, a lifecycle moment, a measurement.
  case event
}
