/// What a vendor service does with an event that breaks one of its backend's documented limits
/// (a name too long, a value too long, too many parameters, a reserved name).
///
/// Vendors such as GA4 answer 2xx and silently drop what breaks their rules, so a service enforces
/// every limit itself before sending. Whatever the policy, every case is counted by reason in the
/// service's ``ServiceStats`` (`repaired` or `dropped`); nothing disappears unseen.
///
/// ```swift
/// // Development: every violation is reported as a typed error, and the event is not sent.
/// let firebase = try FirebaseService(..., limits: .strict { error in assertionFailure("\(error)") })
/// // Production: names and values are repaired (cut, renamed) and the event is sent.
/// let firebase = try FirebaseService(..., limits: .repair)
/// ```
public enum LimitPolicy: Sendable {
  /// Make the event fit (truncate, rename, leave out the extra parameters) and send it.
  case repair
  /// Drop the event.
  case drop
  /// Drop the event and report each violation to `report` as the vendor's typed error (on the
  /// tracker's worker; keep it quick).
  case strict(@Sendable (any Error) -> Void)
}
