import CCurl

/// One HTTP client over a libcurl easy handle: POSTs a body with a timeout and returns the status
/// and the whole answer.
///
/// The `CURL*` handle and every C pointer stay inside this type. It is not `Sendable`: a handle
/// serves one thread at a time, so each call site (an ``EtcdClient`` request) makes its own.
/// No streaming: the coordination layer polls with short, bounded requests.
package final class HTTPClient {
    /// The largest answer kept; a longer one fails as ``HTTPTransportError`` (etcd's answers to
    /// the coordination layer are a few hundred bytes).
    package static let maximumResponseBytes = 4 << 20

    private let handle: UnsafeMutableRawPointer

    /// libcurl's process-wide setup, done once before the first handle (Swift runs a static
    /// initializer exactly once, whichever thread gets there first).
    private static let globalSetup: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

    /// A new handle; `nil` when libcurl cannot make one (out of memory, or its setup failed).
    package init?() {
        guard Self.globalSetup == CURLE_OK, let handle = curl_easy_init() else { return nil }
        self.handle = handle
    }

    deinit { curl_easy_cleanup(handle) }

    /// POSTs `body` (as `application/json`) to `url` and waits up to `timeout` for the whole
    /// answer, connection included. Any HTTP status is an answer; no answer at all (refused,
    /// timed out, cut short, too long) throws.
    package func post(_ url: String, body: [UInt8], timeout: Duration) throws(HTTPTransportError) -> HTTPResponse {
        curl_easy_reset(handle)
        let milliseconds = max(1, Int(timeout.components.seconds * 1_000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        var received = Received()
        var headers: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Content-Type: application/json")
        // No "Expect: 100-continue" round trip before larger bodies.
        headers = curl_slist_append(headers, "Expect:")
        defer { curl_slist_free_all(headers) }
        // A non-empty buffer even for an empty body: libcurl would read a NULL one from stdin.
        let payload = body.isEmpty ? [0] : body
        let code: CURLcode = payload.withUnsafeBytes { bodyBytes in
            withUnsafeMutablePointer(to: &received) { receivedPointer in
                var setup = reactorbus_curl_setopt_string(handle, CURLOPT_URL, url)
                // Threads: no signals for timeouts (libcurl would use SIGALRM for name lookups).
                setup = setup == CURLE_OK ? reactorbus_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1) : setup
                // Straight to the address given, whatever proxy the environment names.
                setup = setup == CURLE_OK ? reactorbus_curl_setopt_string(handle, CURLOPT_PROXY, "") : setup
                setup = setup == CURLE_OK ? reactorbus_curl_setopt_long(handle, CURLOPT_POST, 1) : setup
                setup = setup == CURLE_OK ? reactorbus_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count) : setup
                // Copied by libcurl (POSTFIELDSIZE first, so that it copies that many bytes).
                setup = setup == CURLE_OK
                    ? reactorbus_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bodyBytes.baseAddress))
                    : setup
                setup = setup == CURLE_OK ? reactorbus_curl_setopt_headers(handle, headers) : setup
                setup = setup == CURLE_OK ? reactorbus_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds) : setup
                setup = setup == CURLE_OK ? reactorbus_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds) : setup
                setup = setup == CURLE_OK ? reactorbus_curl_setopt_write_function(handle, collect) : setup
                setup = setup == CURLE_OK ? reactorbus_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, receivedPointer) : setup
                guard setup == CURLE_OK else { return setup }
                return curl_easy_perform(handle)
            }
        }
        guard code == CURLE_OK else {
            let reason = received.overflowed
                ? "the answer exceeded \(Self.maximumResponseBytes) bytes"
                : String(cString: curl_easy_strerror(code))
            throw HTTPTransportError(url: url, reason: reason, timedOut: code == CURLE_OPERATION_TIMEDOUT)
        }
        var status = 0
        _ = reactorbus_curl_response_code(handle, &status)
        return HTTPResponse(status: status, body: received.bytes)
    }
}

/// What libcurl's write callback collects during one `curl_easy_perform`.
private struct Received {
    var bytes: [UInt8] = []
    var overflowed = false
}

/// libcurl's write callback: appends a piece of the answer; returning less than was given (past
/// the size limit) makes libcurl stop with an error.
private let collect: reactorbus_curl_write_callback = { data, size, count, context in
    let length = size * count
    guard let context, let data else { return 0 }
    let received = context.assumingMemoryBound(to: Received.self)
    guard received.pointee.bytes.count + length <= HTTPClient.maximumResponseBytes else {
        received.pointee.overflowed = true
        return 0
    }
    received.pointee.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
    return length
}
