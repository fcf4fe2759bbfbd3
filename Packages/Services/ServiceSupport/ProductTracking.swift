public import CoreTracker
public import TrackingPlan

extension TrackerConfiguration {
  /// The configuration a product's tracker runs with: the product's `defaults` joined to the
  /// configuration's own (the app's first), and, in the development environment, every event checked
  /// against the product's `plan` (``PlanCheckStage``), each violation said through ``warning``.
  ///
  /// The engine adds the defaults before consent, validation and privacy scrubbing, for every
  /// service alike.
  public func forProduct(defaults: EventParameters, plan: TrackingPlan) -> TrackerConfiguration {
    var configuration = self
    configuration.defaultParameters.addMissing(from: defaults)
    if configuration.environment == .development {
      configuration.additionalStages.append(PlanCheckStage(plan: plan, report: configuration.warning))
    }
    return configuration
  }
}
