import Foundation

/// Consent on the worker: the consent in force is what both the command stream (in order) and the
/// app's latest word allow. A withdrawal therefore applies at once to everything not handed over
/// yet, and the services it denies drop what they hold (counted as `consent`); a grant applies from
/// its command on, so nothing tracked while the user was opted out is sent after they opt back in.
/// With a journal, the latest consent is kept in its folder and holds across restarts.
extension TrackingEngine {
  /// Looks at the consent the app set last; applies it if it changed since the last look.
  func refreshConsent() {
    guard let queue else { return }
    let (latest, generation) = queue.consent
    guard generation != consentGeneration else { return }
    consentGeneration = generation
    latestConsent = latest
    applyConsent()
    if let consentFolder { ConsentFile.save(latest, in: consentFolder) }
  }

  /// The command stream reached a consent command.
  func orderedConsentChanged(_ consent: Consent) {
    refreshConsent()
    orderedConsent = consent
    applyConsent()
  }

  private func applyConsent() {
    let before = consent
    consent = orderedConsent.intersection(latestConsent)
    for service in services where before.allows(service.id) && !consent.allows(service.id) {
      service.discardQueued(.consent)
    }
  }
}
