import CollectorWire
import CompressNIO
import HTTPTypes
import Hummingbird
import NIOCore

/// Reads a request body with bounded work: at most `limit` bytes as sent, gzip inflated through a
/// fixed window up to ``CollectorLimits/maximumDecompressedBytes``, and every malformed input ends
/// in a 4xx after at most one pass over its bytes.
enum RequestBody {
  /// The body of `request`: 413 past `limit` bytes, 400 for broken framing (a malformed chunked body
  /// is not "too large": clients would split batches that are fine), 400 for broken gzip.
  ///
  /// `inflatedLimit` bounds the inflated bytes of a gzip body: inflation stops at it, so a body that
  /// inflates past it costs at most that many bytes of work.
  static func read(
    _ request: Request, limit: Int, inflatedLimit: Int = CollectorLimits.maximumDecompressedBytes
  ) async throws -> [UInt8] {
    if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
      throw Refusal(.contentTooLarge, "", "the body is larger than \(limit) bytes")
    }
    var buffer: ByteBuffer
    do {
      buffer = try await request.body.collect(upTo: limit)
    } catch is NIOTooManyBytesError {
      throw Refusal(.contentTooLarge, "", "the body is larger than \(limit) bytes")
    } catch {
      throw Refusal(
        .badRequest, "", "the body's framing is malformed (chunked encoding or length)")
    }
    switch request.headers[.contentEncoding]?.lowercased() {
    case nil, "identity":
      return Array(buffer.readableBytesView)
    case "gzip":
      return try GzipReader.inflate(&buffer, limit: inflatedLimit)
    case let other?:
      throw Refusal(
        .unsupportedMediaType, "", "content-encoding \(other) is not supported (gzip or none)")
    }
  }
}

/// A strict gzip reader (RFC 1952) over zlib.
///
/// Ends on any input: each call to zlib either consumes input, fills output, or reports the end of
/// a member, so the loop makes progress or stops. A body is accepted only when every member ends
/// with its CRC-32 and size trailer (zlib checks both); members written one after another (RFC 1952
/// §2.2) are read as one body, as `gunzip` does; bytes after the last member that do not start a
/// member, a missing trailer, a truncated or corrupt stream are a 400; output past `limit` is a 413
/// (a gzip bomb costs at most `limit` bytes and the time to inflate them).
struct GzipReader {
  private var output: [UInt8] = []
  private var window = ByteBufferAllocator().buffer(capacity: 64 * 1024)
  private let limit: Int
  private static let malformed = Refusal(.badRequest, "", "the body is not valid gzip")

  /// The inflated bytes of `input`, at most `limit` of them.
  static func inflate(_ input: inout ByteBuffer, limit: Int) throws -> [UInt8] {
    var gzip = GzipReader(limit: limit)
    guard input.readableBytes > 0 else { throw malformed }
    while input.readableBytes > 0 {
      guard input.readableBytesView.starts(with: [0x1F, 0x8B]) else { throw malformed }  // a member's magic
      let member: ZlibDecompressor
      do { member = try ZlibDecompressor(algorithm: .gzip) } catch { throw malformed }
      try gzip.inflate(member: member, &input)
    }
    return gzip.output
  }

  private init(limit: Int) { self.limit = limit }

  /// Moves the window's bytes to the output (413 past the limit).
  private mutating func drain() throws {
    guard output.count + window.readableBytes <= limit else {
      throw Refusal(.contentTooLarge, "", "the body inflates to more than \(limit) bytes")
    }
    output.append(contentsOf: window.readableBytesView)
    window.clear()
  }

  /// Inflates one member; returns with `input` just past its trailer.
  private mutating func inflate(member: ZlibDecompressor, _ input: inout ByteBuffer) throws {
    while true {
      let before = input.readableBytes
      do {
        try member.inflate(from: &input, to: &window)
      } catch let error as CompressNIOError where error == .bufferOverflow {
        // The window is full: empty it and go on (no output and no input used would be no progress).
        guard window.readableBytes > 0 || input.readableBytes < before else { throw Self.malformed }
        try drain()
        continue
      } catch {
        // Wants more input than the body has (truncated), corrupt data, a bad header, a CRC or size
        // mismatch.
        throw Self.malformed
      }
      let progressed = window.readableBytes > 0 || input.readableBytes < before
      try drain()
      if input.readableBytes > 0 {
        // zlib stops with input left only at the end of the member.
        guard progressed else { throw Self.malformed }
        return
      }
      // Every byte was consumed: the member ended exactly here, or it was cut short (a missing
      // trailer). One probe byte tells them apart: an ended stream leaves it untouched.
      var probe = ByteBufferAllocator().buffer(capacity: 1)
      probe.writeInteger(UInt8(0))
      do { try member.inflate(from: &probe, to: &window) } catch { throw Self.malformed }
      guard probe.readableBytes == 1, window.readableBytes == 0 else { throw Self.malformed }
      return
    }
  }
}
