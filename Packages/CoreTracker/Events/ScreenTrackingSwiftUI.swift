#if canImport(SwiftUI)
  public import SwiftUI

  /// The tracker `.trackScreen` sends to.
  private struct TrackerEnvironmentKey: EnvironmentKey {
    static let defaultValue: (any CoreTracker)? = nil
  }

  extension EnvironmentValues {
    /// The tracker views track with: set it once at the root (`.environment(\.tracker, tracker)`);
    /// `nil` (the default) tracks nothing.
    public var tracker: (any CoreTracker)? {
      get { self[TrackerEnvironmentKey.self] }
      set { self[TrackerEnvironmentKey.self] = newValue }
    }
  }

  extension View {
    /// Tracks ``ScreenViewEvent`` `name` with `parameters` each time this view comes into view
    /// (once per appearance, ``ScreenVisibility``), through the environment's ``EnvironmentValues/tracker``.
    ///
    /// ```swift
    /// ProductDetailView(product: product)
    ///   .trackScreen("product_detail", parameters: ["product_id": .string(product.id)])
    /// ```
    public func trackScreen(_ name: String, parameters: EventParameters = EventParameters()) -> some View {
      modifier(TrackScreenModifier(event: ScreenViewEvent(name, parameters: parameters)))
    }
  }

  private struct TrackScreenModifier: ViewModifier {
    let event: ScreenViewEvent
    @Environment(\.tracker) private var tracker
    @State private var visibility = ScreenVisibility()

    func body(content: Content) -> some View {
      content
        .onAppear { if visibility.appear() { tracker?.track(event) } }
        .onDisappear { visibility.disappear() }
    }
  }
#endif
