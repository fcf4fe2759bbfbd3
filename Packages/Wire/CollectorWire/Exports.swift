/// The JSON writer every wire format encodes with; re-exported so `import CollectorWire` keeps it.
@_exported public import WireJSON
