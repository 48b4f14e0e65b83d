/// An HTTP answer: its status and its whole body.
package struct HTTPResponse: Sendable, Equatable {
    /// The HTTP status code (200, 404, ...).
    package var status: Int
    /// The body as received.
    package var body: [UInt8]
}
