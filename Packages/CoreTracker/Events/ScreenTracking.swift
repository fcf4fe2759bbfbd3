/// A screen that came into view: the event SwiftUI's `.trackScreen(_:parameters:)` tracks (kind
/// ``EventKind/screenView``, so Firebase gets GA4's `screen_view`), usable from UIKit or any other
/// code as well: `tracker.track(ScreenViewEvent("product_detail", parameters: ["product_id": "P1"]))`.
public struct ScreenViewEvent: CoreTrackable, Hashable {
  public var name: String
  public var kind: EventKind { .screenView }
  public var parameters: EventParameters

  /// The screen `name` with `parameters`.
  public init(_ name: String, parameters: EventParameters = EventParameters()) {
    self.name = name
    self.parameters = parameters
  }
}

/// When a screen counts as viewed, for `.trackScreen`: once per appearance. SwiftUI may call
/// `onAppear` again without `onDisappear` in between (a tab re-selected, a sheet's parent redrawn);
/// those repeats are not new views. Platform-neutral, so Linux tests cover it.
public struct ScreenVisibility: Sendable, Hashable {
  /// Whether the screen is on screen now.
  public private(set) var isVisible = false

  /// A hidden screen.
  public init() {}

  /// The screen appeared: `true` when this is a new view to track.
  public mutating func appear() -> Bool {
    defer { isVisible = true }
    return !isVisible
  }

  /// The screen disappeared: its next appearance is a new view.
  public mutating func disappear() { isVisible = false }
}
