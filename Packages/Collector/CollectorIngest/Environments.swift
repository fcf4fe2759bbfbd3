public import CollectorStore
import CollectorWire

extension StoreBatch {
  /// The batch with every row under the app its environment is stored under
  /// (``AppEnvironment/resolve(target:sent:)``): each row's app is still its write key's target
  /// (`shop`, `shop@development`) and each event's and counter's context says the environment the
  /// batch named. Every commit goes through this, once, so each environment's rows stay apart;
  /// applying it again changes nothing. Quarantined entries keep the key's target, so that a replay
  /// resolves them by the same rule.
  public var environmentsResolved: StoreBatch {
    var batch = self
    for index in batch.events.indices {
      let (app, environment) = AppEnvironment.resolve(
        target: batch.events[index].app, sent: batch.events[index].context[.environment])
      batch.events[index].app = app
      batch.events[index].context[.environment] = environment
    }
    for index in batch.counters.indices {
      let (app, environment) = AppEnvironment.resolve(
        target: batch.counters[index].app, sent: batch.counters[index].context[.environment])
      batch.counters[index].app = app
      batch.counters[index].context[.environment] = environment
    }
    for index in batch.clientDrops.indices {
      batch.clientDrops[index].app = AppEnvironment.resolve(target: batch.clientDrops[index].app, sent: "").storedApp
    }
    return batch
  }
}
