/// A closure run at most once, whoever calls it first.
final class Once: Sendable {
  private let body: Locked<(@Sendable () -> Void)?>
  init(_ body: @escaping @Sendable () -> Void) { self.body = Locked(body) }
  @Sendable func run() {
    let taken = body.withLock { body -> (@Sendable () -> Void)? in
      defer { body = nil }
      return body
    }
    taken?()
  }
}
